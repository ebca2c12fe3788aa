import Benchmark
import Foundation
import WebImage

// The downloader's own overhead (coalescing, queue, event fan-out), with the network taken out by
// data: URLs. The network comparison against curl is Benchmarks/scripts/compare-download.sh.
let benchmarks: @Sendable () -> Void = {
    let payload = Data(repeating: 0xA5, count: 100 * 1024)
    let dataURL = URL(string: "data:image/jpeg;base64," + payload.base64EncodedString())

    Benchmark("ImageDownloader: 100 callers coalesced on one data URL",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal])) { benchmark in
        guard let dataURL else { return }
        let downloader = ImageDownloader()
        benchmark.startMeasurement()
        let tokens = (0..<100).map { _ in downloader.download(ImageLoadRequest(url: dataURL)) }
        for token in tokens {
            for try await event in token.events {
                if case .completed(let data, _) = event { blackHole(data.count) }
            }
        }
    }

    Benchmark("ImageDownloader: 1,000 distinct small data URLs",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal])) { benchmark in
        let urls = (0..<1_000).compactMap { URL(string: "data:image/png;base64," + Data("image \($0)".utf8).base64EncodedString()) }
        let downloader = ImageDownloader()
        benchmark.startMeasurement()
        let tokens = urls.map { downloader.download(ImageLoadRequest(url: $0)) }
        for token in tokens {
            for try await event in token.events {
                if case .completed(let data, _) = event { blackHole(data.count) }
            }
        }
    }
}
