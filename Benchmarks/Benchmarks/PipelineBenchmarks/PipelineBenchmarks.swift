import Benchmark
import Foundation
import WebImage

// The manager's own overhead, with the network and the decoder out of the way: a load answered
// from memory (the path every visible cell takes on its second appearance) and a load of a
// `data:` URL (loader → decode stage → store → caller, no socket). The side-by-side end-to-end
// run against nginx and decode-only is Benchmarks/scripts/compare-pipeline.sh.
let benchmarks: @Sendable () -> Void = {
    Benchmark("ImageCache memory hit", configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal])) { benchmark in
        let cache = ImageCache(diskCache: DiskCache(configuration: try DiskCacheConfiguration(namespace: "pipeline-benchmark")))
        let image = DecodedImage(bitmap: try Bitmap(width: 64, height: 64, filledWith: (1, 2, 3, 255)), hasAlpha: false)
        await cache.store(image, data: nil, key: "k", to: .memory)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(await cache.query(key: "k", options: .memoryOnly))
        }
    }

    Benchmark("ImageManager load, memory hit", configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal])) { benchmark in
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-benchmark-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = ImageManager(cache: ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory))))
        let url = URL(string: "https://example.com/cached.png")!
        let image = DecodedImage(bitmap: try Bitmap(width: 64, height: 64, filledWith: (1, 2, 3, 255)), hasAlpha: false)
        await manager.store(image, for: url, toDisk: false)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.loadImage(with: url))
        }
    }

    Benchmark("ImageManager load, data URL (no cache)", configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal])) { benchmark in
        let manager = ImageManager()
        let bitmap = try Bitmap(width: 16, height: 16, filledWith: (200, 10, 10, 255))
        let png = try ImageCodersManager.shared.encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .png, options: EncodeOptions())
        let url = URL(string: "data:image/png;base64," + png.base64EncodedString())!
        let context = ImageLoadContext(cacheKeyFilter: { _ in nil })
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.loadImage(with: url, context: context))
        }
    }
}
