import ArgumentParser
import Foundation
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

    @Flag(help: "Bypass ImageDownloader: N workers call HTTPImageLoader.shared directly (a baseline for the downloader's own cost).")
    var loaderOnly = false

    func run() async throws {
        let text = try String(contentsOfFile: urlsFile, encoding: .utf8)
        let urls = text.split(whereSeparator: \.isNewline).compactMap { URL(string: String($0)) }
        let downloader = ImageDownloader(configuration: ImageDownloaderConfiguration(maxConcurrentDownloads: concurrency))
        let start = ContinuousClock.now
        let (bytes, failures) = loaderOnly
            ? await Self.loaderOnly(urls, workers: concurrency)
            : await Self.throughDownloader(urls, downloader: downloader)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("downloaded \(urls.count - failures)/\(urls.count) files, \(bytes) bytes, failures \(failures), "
              + String(format: "%.3f s", seconds) + (loaderOnly ? " (loader only)" : ""))
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

    private static func throughDownloader(_ urls: [URL], downloader: ImageDownloader) async -> (Int, Int) {
        // Like curl with its progress meter off: these callers want the bytes only.
        let tokens = urls.map { downloader.download(ImageLoadRequest(url: $0), options: DownloadOptions(reportsProgress: false)) }
        return await withTaskGroup(of: (Int, Int).self) { group in
            for token in tokens {
                group.addTask {
                    do {
                        for try await event in token.events {
                            if case .completed(let data, _) = event { return (data.count, 0) }
                        }
                        return (0, 1)
                    } catch {
                        return (0, 1)
                    }
                }
            }
            return await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
        }
    }
}
