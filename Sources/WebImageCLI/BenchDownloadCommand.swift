import ArgumentParser
import Foundation
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

    func run() async throws {
        let text = try String(contentsOfFile: urlsFile, encoding: .utf8)
        let urls = text.split(whereSeparator: \.isNewline).compactMap { URL(string: String($0)) }
        let downloader = ImageDownloader(configuration: ImageDownloaderConfiguration(maxConcurrentDownloads: concurrency))
        let start = ContinuousClock.now
        let tokens = urls.map { downloader.download(ImageLoadRequest(url: $0)) }
        let (bytes, failures) = await withTaskGroup(of: (Int, Int).self) { group in
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
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("downloaded \(urls.count - failures)/\(urls.count) files, \(bytes) bytes, failures \(failures), "
              + String(format: "%.3f s", seconds))
        if failures > 0 { throw ExitCode(1) }
    }
}
