import Foundation
import Testing
@testable import WebImage

/// Memory limits and pressure read from a fake cgroup tree (the real one is the host's).
@Suite struct CgroupMemoryTests {
    /// A cgroup mount and a `/proc/self/cgroup` in a temporary directory.
    struct FakeCgroup {
        let directory: TemporaryDirectory
        var root: URL { directory.url.appendingPathComponent("sys-fs-cgroup", isDirectory: true) }
        var memory: CgroupMemory {
            CgroupMemory(root: root, membership: directory.url.appendingPathComponent("proc-self-cgroup"))
        }

        init(membership: String) throws {
            directory = try TemporaryDirectory()
            try Data(membership.utf8).write(to: directory.url.appendingPathComponent("proc-self-cgroup"))
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }

        func write(_ text: String, to path: String) throws {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
    }

    static let mebibyte = 1 << 20

    @Test func version2LimitIsTheTightestOfTheGroupAndItsAncestors() throws {
        let cgroup = try FakeCgroup(membership: "0::/app.slice/web.service\n")
        try cgroup.write("max\n", to: "app.slice/memory.max")
        try cgroup.write("536870912\n", to: "app.slice/web.service/memory.max")
        try cgroup.write("104857600\n", to: "app.slice/web.service/memory.current")
        try cgroup.write("anon 50000000\ninactive_file 4857600\nactive_file 1\n", to: "app.slice/web.service/memory.stat")
        let reading = try #require(cgroup.memory.reading())
        #expect(reading.limit == 512 * Self.mebibyte && reading.usage == 100 * Self.mebibyte)
        #expect(reading.workingSet == 100 * Self.mebibyte - 4_857_600)
        // A 512 MiB container on a big host: a fifth of 512 MiB, not a fifth of the host (capped at 1 GiB).
        #expect(MemoryCache<String, Int>.defaultCostLimit(memory: cgroup.memory) == 512 * Self.mebibyte / 5)
        try cgroup.write("268435456\n", to: "app.slice/memory.max")
        #expect(cgroup.memory.limit == 256 * Self.mebibyte, "a parent's tighter limit wins")
    }

    @Test func version1LimitAndTheNamespacedRootFallback() throws {
        let cgroup = try FakeCgroup(membership: "5:devices:/\n4:memory:/docker/abc123\n0::/\n")
        // The group's directory is not visible (a cgroup namespace): the mount's root is the group.
        try cgroup.write("268435456\n", to: "memory/memory.limit_in_bytes")
        #expect(cgroup.memory.limit == 256 * Self.mebibyte)
        try cgroup.write("134217728\n", to: "memory/docker/abc123/memory.limit_in_bytes")
        try cgroup.write("1000\n", to: "memory/docker/abc123/memory.usage_in_bytes")
        try cgroup.write("cache 1\ntotal_inactive_file 400\n", to: "memory/docker/abc123/memory.stat")
        let reading = try #require(cgroup.memory.reading())
        #expect(reading.limit == 128 * Self.mebibyte && reading.workingSet == 600)
        #expect(MemoryCache<String, Int>.defaultCostLimit(memory: cgroup.memory) == 128 * Self.mebibyte / 5)
    }

    @Test func noLimitMeansThePhysicalMemoryRule() throws {
        let unlimited = try FakeCgroup(membership: "4:memory:/\n")
        try unlimited.write("9223372036854771712\n", to: "memory/memory.limit_in_bytes")
        #expect(unlimited.memory.limit == nil)
        let physical = Int(min(ProcessInfo.processInfo.physicalMemory / 5, 1 << 30))
        #expect(MemoryCache<String, Int>.defaultCostLimit(memory: unlimited.memory) == physical)
        let max = try FakeCgroup(membership: "0::/\n")
        try max.write("max\n", to: "memory.max")
        #expect(max.memory.limit == nil)
        let absent = CgroupMemory(root: URL(fileURLWithPath: "/nonexistent"), membership: URL(fileURLWithPath: "/nonexistent/cgroup"))
        #expect(absent.reading() == nil)
        let hostile = try FakeCgroup(membership: "0::/../../etc\n")
        try hostile.write("1048576\n", to: "memory.max")
        #expect(hostile.memory.limit == Self.mebibyte, "'..' in the membership file never leaves the root")
    }

    @Test func pressureIsTheWorkingSetNearTheLimitNotPageCache() throws {
        let cgroup = try FakeCgroup(membership: "0::/\n")
        try cgroup.write("100000000\n", to: "memory.max")
        try cgroup.write("50000000\n", to: "memory.current")
        try cgroup.write("inactive_file 0\n", to: "memory.stat")
        let calls = Locked<[CgroupMemory.Reading]>([])
        let monitor = MemoryPressureMonitor(memory: cgroup.memory, threshold: 0.9) { reading in calls.withLock { $0.append(reading) } }
        #expect(!monitor.check())
        try cgroup.write("95000000\n", to: "memory.current")
        try cgroup.write("inactive_file 20000000\n", to: "memory.stat")
        #expect(!monitor.check(), "clean page cache the kernel can drop is no pressure")
        try cgroup.write("inactive_file 1000000\n", to: "memory.stat")
        #expect(monitor.check())
        #expect(calls.withLock { $0.map(\.workingSet) } == [94_000_000])
    }

    /// The monitor finds pressure by itself once started (the image cache starts one), and
    /// stops calling after ``MemoryPressureMonitor/stop()``.
    @Test(.timeLimit(.minutes(1)))
    func pollingFindsPressureUnasked() async throws {
        let cgroup = try FakeCgroup(membership: "0::/\n")
        try cgroup.write("100000000\n", to: "memory.max")
        try cgroup.write("99000000\n", to: "memory.current")
        let (readings, continuation) = AsyncStream.makeStream(of: Int.self)
        let monitor = MemoryPressureMonitor(memory: cgroup.memory) { continuation.yield($0.workingSet) }
        monitor.start(interval: .milliseconds(5))
        var iterator = readings.makeAsyncIterator()
        #expect(await iterator.next() == 99_000_000)
        monitor.stop()
    }

    @Test func imageCacheShedsItsMemoryCacheUnderPressure() async throws {
        let cgroup = try FakeCgroup(membership: "0::/\n")
        try cgroup.write("100000000\n", to: "memory.max")
        try cgroup.write("10000000\n", to: "memory.current")
        let directory = try TemporaryDirectory()
        let cache = ImageCache(memoryCache: MemoryCache(costLimit: 64 << 20),
                               diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)),
                               memoryPressure: cgroup.memory)
        let monitor = try #require(cache.memoryPressureMonitor)
        let image = DecodedImage(bitmap: try Bitmap(width: 8, height: 8, filledWith: (1, 2, 3, 255)), hasAlpha: false)
        await cache.store(image, data: Data([1, 2, 3]), key: "k")
        #expect(!monitor.check())
        #expect(await cache.contains(key: "k") == .memory)
        try cgroup.write("99000000\n", to: "memory.current")
        #expect(monitor.check())
        #expect(cache.memoryCache.count == 0, "the memory cache is purged, as on a memory warning")
        #expect(await cache.contains(key: "k") == .disk, "the disk cache keeps the entry")
        let quiet = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)), memoryPressure: nil)
        #expect(quiet.memoryPressureMonitor == nil)
    }
}
