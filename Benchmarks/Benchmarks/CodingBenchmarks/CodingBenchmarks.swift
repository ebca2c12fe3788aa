import Benchmark
import Foundation
import WebImage

/// A photo-like bitmap drawn in code: gradients and rings (no files needed).
func photo(width: Int, height: Int) -> Bitmap {
    try! Bitmap(width: width, height: height) { buffer in
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 4
                let ring = UInt8(truncatingIfNeeded: Int((sin(Double((x - width / 2) * (y - height / 2)) / 9_000) + 1) * 60))
                buffer[offset] = UInt8(truncatingIfNeeded: x * 255 / width) &+ ring
                buffer[offset + 1] = UInt8(truncatingIfNeeded: y * 255 / height) &+ ring / 2
                buffer[offset + 2] = UInt8(truncatingIfNeeded: (x ^ y) & 0x3F) &+ ring
                buffer[offset + 3] = 255
            }
        }
    }
}

func encoded(_ format: ImageFormat, width: Int, height: Int) -> Data {
    let image = DecodedImage(bitmap: photo(width: width, height: height), hasAlpha: false)
    return try! ImageCodersManager.shared.encode(image, format: format, options: EncodeOptions(quality: 0.9))
}

/// The animated GIF from the shared corpus, when it is beside the repository.
let corpusGIF: Data? = try? Data(contentsOf: URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("shared/corpus/gif/nuke/cat.gif"))

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
                                                maxDuration: .seconds(5), maxIterations: 200)
    let jpeg12MP = encoded(.jpeg, width: 4000, height: 3000)
    let inputs: [(String, Data)] = [
        ("JPEG 12 MP", jpeg12MP),
        ("JPEG 1 MP", encoded(.jpeg, width: 1200, height: 800)),
        ("PNG 1 MP", encoded(.png, width: 1200, height: 800)),
        ("WebP 1 MP", encoded(.webp, width: 1200, height: 800)),
    ] + (corpusGIF.map { [("GIF animated (corpus cat.gif)", $0)] } ?? [])

    for (name, data) in inputs {
        Benchmark("Decode \(name)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try ImageCodersManager.shared.decode(data, options: DecodeOptions()))
            }
        }
    }

    Benchmark("Thumbnail 256 px of JPEG 12 MP", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ImageCodersManager.shared.decode(jpeg12MP, options: DecodeOptions(maxPixelSize: 256)))
        }
    }

    let webP12MP = encoded(.webp, width: 4000, height: 3000)
    Benchmark("Thumbnail 256 px of WebP 12 MP", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ImageCodersManager.shared.decode(webP12MP, options: DecodeOptions(maxPixelSize: 256)))
        }
    }

    Benchmark("Resample 1024² to 256² (lanczos3)", configuration: configuration) { benchmark in
        let bitmap = photo(width: 1024, height: 1024)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try Resampler.resize(bitmap, width: 256, height: 256))
        }
    }
}
