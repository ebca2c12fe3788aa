import Dispatch
import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Counts how many pieces of CPU work run at once: each arrival holds until the test opens the
/// probe, so the count shows what the scheduler let in, not how fast the work happened to end.
final class ConcurrencyProbe: Sendable {
    private struct State {
        var running = 0
        var highest = 0
        var blocked = 0
        var open = false
    }
    private let state = Locked(State())
    private let passage = DispatchSemaphore(value: 0)

    var running: Int { state.withLock { $0.running } }
    var highest: Int { state.withLock { $0.highest } }

    /// Runs `work` as one counted piece of work, holding it first while the probe is closed.
    func measure<T>(_ work: () throws -> T) rethrows -> T {
        let mustWait = state.withLock { state -> Bool in
            state.running += 1
            state.highest = max(state.highest, state.running)
            if state.open { return false }
            state.blocked += 1
            return true
        }
        // Bounded, so a failing test cannot hang the suite.
        if mustWait { _ = passage.wait(timeout: .now() + 20) }
        defer { state.withLock { $0.running -= 1 } }
        return try work()
    }

    /// Lets every held and later arrival through.
    func open() {
        let blocked = state.withLock { state -> Int in
            state.open = true
            defer { state.blocked = 0 }
            return state.blocked
        }
        for _ in 0..<blocked { passage.signal() }
    }
}

/// Decodes and encodes with the real coders, inside the probe.
struct ProbedCoder: ImageCoder {
    let probe: ConcurrencyProbe
    private let real = ImageCodersManager(coders: ImageCodersManager.defaultCoders)
    init(_ probe: ConcurrencyProbe) { self.probe = probe }
    func canDecode(_ data: Data) -> Bool { real.canDecode(data) }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        try probe.measure { try real.decode(data, options: options) }
    }
    func canEncode(_ format: ImageFormat) -> Bool { real.canEncode(format) }
    func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        try probe.measure { try real.encode(image, format: format, options: options) }
    }
}

/// Transforms inside the probe.
struct ProbedTransformer: ImageTransformer {
    let probe: ConcurrencyProbe
    let inner = GrayscaleTransformer()
    var identifier: String { "probed-" + inner.identifier }
    func transform(_ image: DecodedImage) throws -> DecodedImage { try probe.measure { try inner.transform(image) } }
}

@Suite("One CPU budget", .timeLimit(.minutes(1)))
struct CPUBudgetTests {
    /// Decodes of disk hits (through two managers whose own limits are wider than the machine),
    /// the cache's own decodes, its encodes for the disk and transforms all take a slot of
    /// ``WorkQueue/cpu``: however many are asked for at once, no more run than it has slots.
    @Test func cpuWorkNeverExceedsTheBudget() async throws {
        let probe = ConcurrencyProbe()
        let coders = ImageCodersManager(coders: [ProbedCoder(probe)])
        let width = WorkQueue.cpu.width
        let perKind = width / 2 + 1
        let jobs = 5 * perKind
        let wide = ImageManagerConfiguration(processingConcurrency: 4 * width)
        let directories = [try TemporaryDirectory(), try TemporaryDirectory()]
        let managers = directories.map { directory in
            let cache = ImageCache(memoryCache: MemoryCache(costLimit: 64 << 20),
                                   diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)), coders: coders)
            return (ImageManager(cache: cache, loader: ImageDownloader(), coders: coders, configuration: wide), cache)
        }
        let bytes = try SampleImages.encoded(.png, width: 48, height: 32)
        let image = try ImageCodersManager.shared.decode(bytes, options: DecodeOptions())
        let url: @Sendable (Int) -> URL = { n in URL(string: "https://budget.invalid/\(n).png")! }
        for (_, cache) in managers {
            for n in 0..<(3 * perKind) { try await cache.diskCache.store(bytes, forKey: url(n).absoluteString) }
        }
        let transformer = ProbedTransformer(probe: probe)
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<perKind {
                // Disk hits decoded in each manager's decode stage.
                for (manager, _) in managers {
                    group.addTask { _ = try? await manager.loadImage(with: url(n)) }
                }
                let (manager, cache) = managers[0]
                let otherCache = managers[1].1
                // A transform of an original the cache holds in memory.
                let original = url(perKind + n)
                await cache.store(image, data: nil, key: original.absoluteString, to: .memory)
                group.addTask { _ = try? await manager.loadImage(with: original, context: ImageLoadContext(transformer: transformer)) }
                // The cache's own decode, for a caller that asks it for an image.
                let direct = url(2 * perKind + n).absoluteString
                group.addTask { _ = await otherCache.query(key: direct) }
                // An encode for the disk (no original bytes).
                group.addTask { await cache.store(image, data: nil, key: "encoded-\(n)", to: .disk) }
            }
            // Every job has either a slot or a place in the budget's queue.
            await waitUntil("the budget is full and the rest wait for it") {
                probe.running > width || (probe.running == width && WorkQueue.cpu.waitingCount >= jobs - width)
            }
            #expect(probe.highest == width, "at most one piece of CPU work per core at a time")
            probe.open()
        }
        #expect(probe.highest == width)
        withExtendedLifetime(directories) {}
    }
}
