import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `webimage prefetch --urls-file FILE`: warms the cache with a progress bar and a summary.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Load a list of URLs into the cache at low priority, with a progress bar."
    )

    @OptionGroup var common: ManagerArguments

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "Draw no progress bar.")
    var noProgress = false

    func validate() throws {
        guard common.urlsFile != nil else { throw ValidationError("--urls-file is required") }
    }

    func run() async throws {
        let urls = try common.urls([])
        let manager = common.makeManager()
        let prefetcher = ImagePrefetcher(manager: manager,
                                         configuration: .init(maxConcurrentPrefetches: common.concurrency))
        let token = prefetcher.prefetch(urls, context: ImageLoadContext(headers: try common.parsedHeaders()))
        let bar = ProgressBar()
        // On a terminal the bar redraws in place; in a log it prints at every tenth.
        let interactive = standardErrorIsTerminal()
        var lastTenth = -1
        for await progress in token.progress where !noProgress {
            if interactive {
                writeToStandardError("\r" + bar.render(progress) + "\u{1B}[K")
            } else if Int(progress.fraction * 10) > lastTenth {
                lastTenth = Int(progress.fraction * 10)
                writeToStandardError(bar.render(progress) + "\n")
            }
        }
        if interactive, !noProgress { writeToStandardError("\n") }
        let summary = await token.summary
        await manager.waitForPendingStores()
        let seconds = summary.duration.milliseconds / 1000
        let progress = summary.progress
        if json {
            print(JSONOutput.line(PrefetchReport(
                total: progress.total, finished: progress.finished, failed: progress.failed, cacheHits: summary.cacheHits,
                downloadedBytes: progress.downloadedBytes, seconds: (seconds * 1e6).rounded() / 1e6,
                cancelled: summary.wasCancelled)))
        } else {
            print("prefetched \(progress.finished) of \(progress.total) (\(summary.cacheHits) already cached, \(progress.failed) failed), "
                  + ProgressBar.bytes(progress.downloadedBytes) + " downloaded in \(seconds.fixed(2)) s")
        }
        if progress.failed > 0 { throw ExitCode(1) }
    }
}

/// What `prefetch --json` prints: one object for the whole run.
struct PrefetchReport: Encodable {
    var total: Int
    var finished: Int
    var failed: Int
    var cacheHits: Int
    var downloadedBytes: Int64
    var seconds: Double
    var cancelled: Bool
}
