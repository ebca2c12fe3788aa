import ArgumentParser
import WebImage

/// `webimage`: the command-line face of swift-webimage.
///
/// Swift concurrency keeps its default executor. Installing SwiftNIO's event loops in its place
/// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`) ran
/// every child task of a task on that task's event loop, so CPU work in tasks (the demo's encodes)
/// used one core of two; it is also impossible in a binary with the Swift runtime linked
/// statically, where the hook it needs is not exported, and it measured no faster for downloads.
@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, decode and cache images with swift-webimage.",
        version: WebImageVersion.current,
        subcommands: [
            DemoCommand.self,
            LoadCommand.self,
            PrefetchCommand.self,
            DecodeCommand.self,
            PlayCommand.self,
            CacheCommand.self,
            BenchDecodeCommand.self,
            BenchDecodeFilesCommand.self,
            BenchDownloadCommand.self,
            BenchRenderCommand.self,
            ServeCommand.self,
        ]
    )

    /// The commands that download.
    private static let networkCommands: Set<String> = ["demo", "load", "prefetch", "bench-download"]

    static func main() async {
        // Starting the event loops takes about as long as parsing the arguments does: for a
        // command that will download, do both at once, on the two threads there are anyway.
        if let command = CommandLine.arguments.dropFirst().first, networkCommands.contains(command) {
            Task.detached { _ = HTTPImageLoader.shared }
        }
        await main(nil)
    }
}
