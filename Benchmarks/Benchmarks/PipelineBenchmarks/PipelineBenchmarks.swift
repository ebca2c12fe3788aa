import Benchmark
import WebImage

// The end-to-end pipeline benchmark belongs to the ImageManager work (not built yet); until then
// this target measures the cache round trip the pipeline is made of: memory hit of a decoded image.
let benchmarks: @Sendable () -> Void = {
    Benchmark("ImageCache memory hit", configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal])) { benchmark in
        let cache = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(namespace: "pipeline-benchmark")))
        let image = DecodedImage(bitmap: try Bitmap(width: 64, height: 64, filledWith: (1, 2, 3, 255)), hasAlpha: false)
        await cache.store(image, data: nil, key: "k", to: .memory)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(await cache.query(key: "k", options: .memoryOnly))
        }
    }
}
