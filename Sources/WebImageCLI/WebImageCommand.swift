import ArgumentParser

/// `webimage`: the command-line face of swift-webimage.
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
