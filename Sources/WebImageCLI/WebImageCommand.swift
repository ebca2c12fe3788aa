import ArgumentParser

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
