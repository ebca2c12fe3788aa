import Benchmark
import Foundation
import WebImage

/// The value both memory caches hold: a class, as NSCache requires.
final class Payload: Sendable {
    let bytes: Int
    init(bytes: Int) { self.bytes = bytes }
}

/// The same workload for both memory caches: 10,000 keys, 100,000 operations, 4 reads per write,
/// keys drawn with a fixed skew so some are hot. Precomputed so the loop measures the caches only.
let operations: [(key: Int, isWrite: Bool)] = {
    var generator = SystemRandomNumberGenerator()
    _ = generator
    var state: UInt64 = 12345
    return (0..<100_000).map { index in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let key = Int((state >> 33) % 10_000) / (index % 3 == 0 ? 10 : 1)
        return (key, index % 5 == 0)
    }
}()

func temporaryDirectory(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(name)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

let benchmarks: @Sendable () -> Void = {
    let memoryConfiguration = Benchmark.Configuration(metrics: [.wallClock, .throughput, .mallocCountTotal],
                                                      maxDuration: .seconds(5), maxIterations: 50)

    Benchmark("MemoryCache 100k get/set", configuration: memoryConfiguration) { benchmark in
        let payloads = (0..<10_000).map { Payload(bytes: $0) }
        let cache = MemoryCache<Int, Payload>(costLimit: 50_000_000, countLimit: 5_000)
        benchmark.startMeasurement()
        for operation in operations {
            if operation.isWrite {
                cache.setValue(payloads[operation.key], forKey: operation.key, cost: 1_000)
            } else {
                blackHole(cache.value(forKey: operation.key))
            }
        }
    }

    Benchmark("NSCache 100k get/set", configuration: memoryConfiguration) { benchmark in
        let payloads = (0..<10_000).map { Payload(bytes: $0) }
        let keys = (0..<10_000).map { NSNumber(value: $0) }
        let cache = NSCache<NSNumber, Payload>()
        cache.totalCostLimit = 50_000_000
        cache.countLimit = 5_000
        benchmark.startMeasurement()
        for operation in operations {
            if operation.isWrite {
                cache.setObject(payloads[operation.key], forKey: keys[operation.key], cost: 1_000)
            } else {
                blackHole(cache.object(forKey: keys[operation.key]))
            }
        }
    }

    // File creation on this machine's virtual disk stalls now and then (one open(O_CREAT) took
    // 0.1-5 ms in the same run; its ext4 has no journal and scans recently deleted inodes), so
    // wall time swings 1-6x between runs of the same code. Each iteration starts after a sync (no
    // dirty pages left from the previous one), and CPU time is reported beside wall time.
    // The baseline's `Data.write(to:options: .atomic)` fsyncs each file on Linux; DiskCache does
    // not (a torn entry fails its checksum), which is most of the difference.
    let diskConfiguration = Benchmark.Configuration(metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
                                                    maxDuration: .seconds(60), maxIterations: 5)
    let fiftyKB = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    Benchmark("DiskCache store+read 10k x 50 KB", configuration: diskConfiguration) { benchmark in
        let directory = temporaryDirectory("disk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory, maxSize: 0))
        sync()
        benchmark.startMeasurement()
        for index in 0..<10_000 {
            try cache.storeSynchronously(fiftyKB, forKey: "https://example.com/\(index).jpg")
        }
        for index in 0..<10_000 {
            blackHole(cache.entrySynchronously(forKey: "https://example.com/\(index).jpg"))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("Data.write+Data(contentsOf:) 10k x 50 KB", configuration: diskConfiguration) { benchmark in
        let directory = temporaryDirectory("plain")
        defer { try? FileManager.default.removeItem(at: directory) }
        sync()
        benchmark.startMeasurement()
        for index in 0..<10_000 {
            try fiftyKB.write(to: directory.appendingPathComponent("\(index).jpg"), options: .atomic)
        }
        for index in 0..<10_000 {
            blackHole(try Data(contentsOf: directory.appendingPathComponent("\(index).jpg")))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("DiskCache removeExpired + trim over 100k entries",
              configuration: .init(metrics: [.wallClock], maxDuration: .seconds(60), maxIterations: 1)) { benchmark in
        let directory = temporaryDirectory("trim")
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = DiskCache(configuration: DiskCacheConfiguration(directory: directory, maxSize: 0))
        for index in 0..<100_000 { try writer.storeSynchronously(Data([UInt8(truncatingIfNeeded: index)]), forKey: "k\(index)") }
        // A fresh instance scans the directory, then expires nothing and trims to half the size.
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory, maxSize: 0))
        benchmark.startMeasurement()
        blackHole(await cache.removeExpired())
        let size = await cache.totalSize
        blackHole(await cache.trim(toSize: size / 2))
        benchmark.stopMeasurement()
    }
}
