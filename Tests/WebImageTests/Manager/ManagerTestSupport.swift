import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Decodes with the real coders, counting decodes; an optional hold makes a decode wait until
/// the test releases it (to cancel "while decoding").
final class CountingDecoder: ImageCoder {
    private let real = ImageCodersManager(coders: ImageCodersManager.defaultCoders)
    private let count = Locked(0)
    private let options = Locked<DecodeOptions?>(nil)
    let hold: DecodeHold?

    init(hold: DecodeHold? = nil) { self.hold = hold }

    var decodes: Int { count.withLock { $0 } }
    /// The options of the latest decode.
    var lastOptions: DecodeOptions? { options.withLock { $0 } }
    func canDecode(_ data: Data) -> Bool { real.canDecode(data) }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        count.withLock { $0 += 1 }
        self.options.withLock { $0 = options }
        hold?.arriveAndWait()
        return try real.decode(data, options: options)
    }
    func canEncode(_ format: ImageFormat) -> Bool { real.canEncode(format) }
    func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        try real.encode(image, format: format, options: options)
    }
}

/// Stops a synchronous decode until released, and tells the test it has arrived.
final class DecodeHold: Sendable {
    private let released = DispatchSemaphore(value: 0)
    let arrivals: AsyncStream<Void>
    private let arrival: AsyncStream<Void>.Continuation

    init() { (arrivals, arrival) = AsyncStream.makeStream() }

    func arriveAndWait() {
        arrival.yield()
        // Bounded, so a failing test cannot hang the suite.
        _ = released.wait(timeout: .now() + 10)
    }

    func release() { released.signal() }
}

/// A count many tasks add to.
final class Counter: Sendable {
    private let value = Locked(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Counts how often a transformer runs.
struct CountingTransformer: ImageTransformer {
    let inner: any ImageTransformer
    let runs: Counter
    init(_ inner: any ImageTransformer, runs: Counter) { self.inner = inner; self.runs = runs }
    var identifier: String { inner.identifier }
    func transform(_ image: DecodedImage) throws -> DecodedImage {
        runs.increment()
        return try inner.transform(image)
    }
}

/// A manager of its own: a cache in a fresh directory, its own downloader, counting coders.
struct ManagerFixture: Sendable {
    let directory: TemporaryDirectory
    let cache: ImageCache
    let downloader: ImageDownloader
    let decoder: CountingDecoder
    let manager: ImageManager

    init(downloader configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration(timeout: .seconds(5)),
         manager managerConfiguration: ImageManagerConfiguration = ImageManagerConfiguration(),
         hold: DecodeHold? = nil) throws {
        directory = try TemporaryDirectory()
        decoder = CountingDecoder(hold: hold)
        let coders = ImageCodersManager(coders: [decoder])
        cache = ImageCache(memoryCache: MemoryCache(costLimit: 256 << 20),
                           diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)), coders: coders)
        downloader = ImageDownloader(configuration: configuration)
        manager = ImageManager(cache: cache, loader: downloader, coders: coders, configuration: managerConfiguration)
    }
}

/// A JPEG of `width` × `height` the tests serve.
func sampleJPEG(width: Int = 64, height: Int = 48, seed: Int = 0) throws -> Data {
    try SampleImages.encoded(.jpeg, width: width, height: height, seed: seed)
}

/// An animated WebP of `frames` frames.
func sampleAnimatedWebP(frames: Int = 3, width: Int = 40, height: Int = 30) throws -> Data {
    let images = try (0..<frames).map { ImageFrame(bitmap: try SampleImages.gradient(width: width, height: height, seed: $0), duration: 0.1) }
    let image = try DecodedImage(frames: images, loopCount: 0, format: .webp, hasAlpha: false)
    return try ImageCodersManager.shared.encode(image, format: .webp, options: EncodeOptions(lossless: true))
}

/// Polls `condition` until it holds (every millisecond: a spinning poll would starve the other
/// tests' timeouts on two cores); fails the test after `seconds`. The wait ends on the condition,
/// never on the time, so it is not a sleep used as synchronization.
func waitUntil(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("timed out waiting until \(what)")
            return
        }
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// Reads a task's events until it ends; returns what arrived and the error, if any.
func drain(_ task: ImageTask) async -> (events: [ImageTaskEvent], error: WebImageError?) {
    var events: [ImageTaskEvent] = []
    do {
        for try await event in task.events { events.append(event) }
        return (events, nil)
    } catch {
        return (events, error as? WebImageError)
    }
}

/// The error a load threw, or `nil` when it succeeded.
func loadError(_ body: () async throws -> ImageResult) async -> WebImageError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? WebImageError
    }
}
