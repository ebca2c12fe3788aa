import Dispatch
import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Records the width of every image it decodes, in order; the first decode waits until released.
final class OrderRecordingCoder: ImageCoder {
    private let real = ImageCodersManager(coders: ImageCodersManager.defaultCoders)
    private let order = Locked<[Int]>([])
    private let released = DispatchSemaphore(value: 0)
    let arrivals: AsyncStream<Void>
    private let arrival: AsyncStream<Void>.Continuation

    init() { (arrivals, arrival) = AsyncStream.makeStream() }

    var widths: [Int] { order.withLock { $0 } }
    func release() { released.signal() }

    func canDecode(_ data: Data) -> Bool { real.canDecode(data) }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        let image = try real.decode(data, options: options)
        let first = order.withLock { order -> Bool in
            order.append(image.width)
            return order.count == 1
        }
        if first {
            arrival.yield()
            // Bounded, so a failing test cannot hang the suite.
            _ = released.wait(timeout: .now() + 20)
        }
        return image
    }
}

@Suite("ImageManager disk hits", .timeLimit(.minutes(1)))
struct ImageManagerDiskDecodeTests {
    /// The cache hands the manager a disk hit's bytes; the manager's decode stage decodes them,
    /// in its processing queue, at the load's priority: behind a decode already running, a
    /// high-priority disk hit overtakes a low-priority one that came first.
    @Test func diskHitIsDecodedInTheDecodeStageAtTheLoadsPriority() async throws {
        let directory = try TemporaryDirectory()
        let coder = OrderRecordingCoder()
        let coders = ImageCodersManager(coders: [coder])
        let cache = ImageCache(memoryCache: MemoryCache(costLimit: 64 << 20),
                               diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)), coders: coders)
        let manager = ImageManager(cache: cache, loader: ImageDownloader(), coders: coders,
                                   configuration: ImageManagerConfiguration(processingConcurrency: 1))
        let url = { (width: Int) in URL(string: "https://disk.invalid/\(width).png")! }
        for width in [10, 20, 30] {
            try await cache.diskCache.store(try SampleImages.encoded(.png, width: width, height: 8), forKey: url(width).absoluteString)
        }
        let first = manager.imageTask(with: url(10))
        for await _ in coder.arrivals { break }
        let low = manager.imageTask(with: url(20), options: .lowPriority)
        let high = manager.imageTask(with: url(30), options: .highPriority)
        await waitUntil("both disk hits wait for the decode stage's slot") { manager.stages.processing.waitingCount == 2 }
        #expect(coder.widths == [10], "no disk hit is decoded outside the decode stage")
        coder.release()
        for task in [first, low, high] {
            let result = try await task.result
            #expect(result.cacheType == .disk)
        }
        #expect(coder.widths == [10, 30, 20])
        #expect(await cache.query(key: url(20).absoluteString, options: .memoryOnly).cacheType == .memory, "a decoded disk hit is kept in memory")
    }
}
