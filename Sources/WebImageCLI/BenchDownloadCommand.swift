import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import WebImage

/// `webimage bench-download`: fetches a list of URLs through ``ImageDownloader`` and times it
/// (used by Benchmarks/scripts/compare-download.sh; hidden from help).
struct BenchDownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-download",
        abstract: "Download every URL in a file through ImageDownloader and print the wall time.",
        shouldDisplay: false
    )

    @Option(help: "A file with one URL per line.")
    var urlsFile: String

    @Option(help: "The downloader's maxConcurrentDownloads.")
    var concurrency = 6

    @Flag(help: "Bypass ImageDownloader: N workers call HTTPImageLoader.shared directly (a baseline for the downloader's own cost; the shared loader's HTTP version and trust).")
    var loaderOnly = false

    @Flag(help: "Take each download's result from its token's event stream (one task awaiting them in turn) instead of a completion handler.")
    var streams = false

    @Option(name: .customLong("http-version"), help: ArgumentHelp("Which HTTP to speak, as `load --http-version`.", valueName: "auto|1.1|2"))
    var httpVersion: HTTPVersionArgument = .auto

    @Option(help: ArgumentHelp("Trust the certificates in this PEM file too (as `load --ca-file`).", valueName: "PEM"))
    var caFile: String?

    func run() async throws {
        let text = try String(contentsOfFile: urlsFile, encoding: .utf8)
        let urls = text.split(whereSeparator: \.isNewline).compactMap { URL(string: String($0)) }
        let pem = try caFile.map { try String(contentsOfFile: $0, encoding: .utf8) }
        var configuration = ImageDownloaderConfiguration(maxConcurrentDownloads: concurrency, trustedCertificatesPEM: pem.map { [$0] } ?? [])
        configuration.httpVersion = httpVersion.downloader
        let downloader = ImageDownloader(configuration: configuration)
        let start = ContinuousClock.now
        let (bytes, failures) = loaderOnly ? await Self.loaderOnly(urls, workers: concurrency)
            : streams ? await Self.throughStreams(urls, downloader: downloader)
            : await Self.throughHandlers(urls, downloader: downloader)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let mode = loaderOnly ? " (loader only)" : streams ? " (event streams)" : ""
        print("downloaded \(urls.count - failures)/\(urls.count) files, \(bytes) bytes, failures \(failures), \(seconds.fixed(3)) s\(mode)")
        if failures > 0 { throw ExitCode(1) }
    }

    private static func loaderOnly(_ urls: [URL], workers: Int) async -> (Int, Int) {
        let next = WorkIndex()
        return await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<max(1, workers) {
                group.addTask {
                    var (bytes, failures) = (0, 0)
                    while true {
                        let index = next.take()
                        guard index < urls.count else { return (bytes, failures) }
                        var ok = false
                        do {
                            for try await event in HTTPImageLoader.shared.load(ImageLoadRequest(url: urls[index])) {
                                if case .completed(let data, _) = event { bytes += data.count; ok = true }
                            }
                        } catch {}
                        if !ok { failures += 1 }
                    }
                }
            }
            return await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
        }
    }

    /// The way curl takes them: each body handed over where it arrives, as it completes.
    private static func throughHandlers(_ urls: [URL], downloader: ImageDownloader) async -> (Int, Int) {
        let tally = Tally(remaining: urls.count)
        guard !urls.isEmpty else { return (0, 0) }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for url in urls {
                downloader.download(ImageLoadRequest(url: url)) { result in
                    if case .success(.data(let data, _)) = result {
                        tally.bytes.add(data.count, ordering: .relaxed)
                    } else {
                        tally.failures.add(1, ordering: .relaxed)
                    }
                    if tally.remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.resume() }
                }
            }
        }
        return (tally.bytes.load(ordering: .relaxed), tally.failures.load(ordering: .relaxed))
    }

    private static func throughStreams(_ urls: [URL], downloader: ImageDownloader) async -> (Int, Int) {
        // Like curl with its progress meter off: these callers want the bytes only.
        let tokens = urls.map { downloader.download(ImageLoadRequest(url: $0), options: DownloadOptions(reportsProgress: false)) }
        var (bytes, failures) = (0, 0)
        for token in tokens {
            var ok = false
            do {
                for try await event in token.events {
                    if case .completed(let data, _) = event { bytes += data.count; ok = true }
                }
            } catch {}
            if !ok { failures += 1 }
        }
        return (bytes, failures)
    }
}

/// Counts of the handler-based run, updated from the event loops.
private final class Tally: Sendable {
    let bytes = Atomic(0)
    let failures = Atomic(0)
    let remaining: Atomic<Int>

    init(remaining: Int) { self.remaining = Atomic(remaining) }
}
