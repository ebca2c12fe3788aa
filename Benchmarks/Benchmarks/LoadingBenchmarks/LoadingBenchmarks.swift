import Benchmark
import WebImage

// PLACEHOLDER: filled in by the work that owns this area.
let benchmarks: @Sendable () -> Void = {
    Benchmark("Resample 1024² to 256²", configuration: .init(metrics: [.wallClock, .mallocCountTotal])) { benchmark in
        let bitmap = try Bitmap(width: 1024, height: 1024, filledWith: (10, 20, 30, 255))
        benchmark.startMeasurement()
        blackHole(try Resampler.resize(bitmap, width: 256, height: 256))
    }
}
