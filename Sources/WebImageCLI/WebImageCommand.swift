import ArgumentParser
import Dispatch
import NIOCore
import NIOPosix

/// The entry point: Swift concurrency runs on SwiftNIO's event loops, then the command runs.
///
/// Every task of this process does I/O through NIO (connections) or hands CPU work to Dispatch
/// (decoding, file I/O), so one set of threads serves both: a load no longer hops from the
/// cooperative pool to an event loop and back for each request. NIO allows this only before the
/// first task starts, hence a synchronous `main`.
@main
enum WebImageMain {
    static func main() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let done = DispatchSemaphore(value: 0)
        // Detached: `main` runs on the main actor, whose thread waits below.
        Task.detached {
            await WebImageCommand.main()
            done.signal()
        }
        done.wait()
    }
}

/// `webimage`: the command-line face of swift-webimage.
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, decode and cache images with swift-webimage.",
        subcommands: [
            DemoCommand.self,
            LoadCommand.self,
            PrefetchCommand.self,
            DecodeCommand.self,
            CacheCommand.self,
            BenchDecodeCommand.self,
            BenchDecodeFilesCommand.self,
            BenchDownloadCommand.self,
        ]
    )
}
