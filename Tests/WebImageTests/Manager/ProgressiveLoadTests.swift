import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// `.progressiveLoad` through the manager against a throttled loopback origin: partial images
/// early and in order, then the final image exactly as a one-shot decode makes it; partial
/// images never cached, shared by coalesced loads, thumbnails when asked, and stopped at once by
/// a cancel.
@Suite("Progressive loads", .serialized, .timeLimit(.minutes(2)))
struct ProgressiveLoadTests {
    /// A progressive JPEG of about `bytes` bytes (a photo-like picture sized to it).
    static func progressiveJPEG(about bytes: Int) throws -> Data {
        var width = 800
        var jpeg = try ProgressiveSamples.progressiveJPEG(width: width, height: width * 3 / 4)
        for _ in 0..<3 where abs(jpeg.count - bytes) > bytes / 20 {
            width = Int(Double(width) * (Double(bytes) / Double(jpeg.count)).squareRoot())
            jpeg = try ProgressiveSamples.progressiveJPEG(width: width, height: width * 3 / 4)
        }
        return jpeg
    }

    /// What a progressive load reported: each partial image with the bytes received when it
    /// arrived, and the final result.
    struct Observed {
        var partials: [(bytes: Int64, image: DecodedImage)] = []
        var result: ImageResult?
    }

    static func observe(_ task: ImageTask, onPartial: (DecodedImage) async -> Void = { _ in }) async throws -> Observed {
        var observed = Observed()
        var received: Int64 = 0
        for try await event in task.events {
            switch event {
            case .progress(let bytes, _): received = bytes
            case .partialImage(let image):
                observed.partials.append((received, image))
                await onPartial(image)
            case .completed(let result): observed.result = result
            case .cachedImage: Issue.record("no cached image was asked for")
            }
        }
        return observed
    }

    @Test func aProgressiveJPEGOverASlowLinkShowsItsFirstPartialEarlyAndEndsExact() async throws {
        let jpeg = try Self.progressiveJPEG(about: 500_000)
        #expect(abs(jpeg.count - 500_000) < 50_000, "a 500 KB file: \(jpeg.count) bytes")
        let oneShot = try ImageCodersManager.shared.decode(jpeg, options: DecodeOptions())
        try await withServer { server in
            server.route("/photo.jpg", LoopbackResponse.image(jpeg, contentType: "image/jpeg").throttled(bytesPerSecond: 200_000))
            let fixture = try ManagerFixture()
            let url = server.url("/photo.jpg")
            let key = try #require(fixture.manager.cacheKey(for: url))
            let cachedDuringLoad = Locked<[Bool]>([])
            let task = fixture.manager.imageTask(with: url, options: [.progressiveLoad, .waitStoreCache],
                                                 context: ImageLoadContext(coders: fixture.progressiveCoders))
            let observed = try await Self.observe(task) { _ in
                let hit = await fixture.cache.query(key: key)
                cachedDuringLoad.withLock { $0.append(hit.image != nil) }
            }
            let result = try #require(observed.result)
            let first = try #require(observed.partials.first, "partial images arrive")
            #expect(Double(first.bytes) <= 0.2 * Double(jpeg.count),
                    "the first partial image after \(first.bytes) of \(jpeg.count) bytes")
            #expect(observed.partials.count >= 2)
            var previous = Double.infinity
            for partial in observed.partials {
                #expect((partial.image.width, partial.image.height) == (oneShot.width, oneShot.height))
                let difference = ProgressiveSamples.meanDifference(partial.image.bitmap, oneShot.bitmap)
                #expect(difference <= previous, "more detail each time: \(difference) after \(previous)")
                previous = difference
            }
            #expect(ProgressiveSamples.identical(result.image.bitmap, oneShot.bitmap), "the final image is the one-shot decode")
            #expect(cachedDuringLoad.withLock { $0 }.allSatisfy { !$0 }, "no partial image is cached")
            let cached = try #require(await fixture.cache.query(key: key).image)
            #expect(ProgressiveSamples.identical(cached.bitmap, oneShot.bitmap), "the cache holds the final image")
            #expect(fixture.decoder.decodes == 1, "one final decode")
        }
    }

    @Test func partialImagesAreThumbnailsWhenAThumbnailIsAsked() async throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 640, height: 480)
        try await withServer { server in
            server.route("/photo.jpg", LoopbackResponse.image(jpeg, contentType: "image/jpeg").throttled(bytesPerSecond: 200_000))
            let fixture = try ManagerFixture()
            let task = fixture.manager.imageTask(with: server.url("/photo.jpg"), options: .progressiveLoad,
                                                 context: ImageLoadContext(coders: fixture.progressiveCoders, maxPixelSize: 80))
            let observed = try await Self.observe(task)
            let result = try #require(observed.result)
            #expect((result.image.width, result.image.height) == (80, 60))
            #expect(!observed.partials.isEmpty)
            for partial in observed.partials { #expect((partial.image.width, partial.image.height) == (80, 60)) }
        }
    }

    @Test func coalescedLoadsShareOnePartialDecodeAtATime() async throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 640, height: 480)
        try await withServer { server in
            let gate = LoopbackGate()
            var response = LoopbackResponse.image(jpeg, contentType: "image/jpeg").throttled(bytesPerSecond: 300_000)
            response.gate = gate
            server.route("/photo.jpg", response)
            let fixture = try ManagerFixture()
            let spy = SpyIncrementalCoder()
            let coders = ImageCodersManager(coders: [spy] + ImageCodersManager.defaultCoders)
            let context = ImageLoadContext(coders: coders)
            let url = server.url("/photo.jpg")
            let first = fixture.manager.imageTask(with: url, options: .progressiveLoad, context: context)
            let second = fixture.manager.imageTask(with: url, options: .progressiveLoad, context: context)
            await waitUntil("the request arrived") { server.requestCount(for: "/photo.jpg") == 1 }
            gate.open()
            async let a = Self.observe(first)
            async let b = Self.observe(second)
            let (one, two) = try await (a, b)
            #expect(spy.decodersMade == 1, "one incremental decoder for both loads")
            #expect(spy.maxConcurrentUpdates == 1, "at most one partial decode in flight")
            #expect(one.partials.count == spy.imagesMade && two.partials.count == spy.imagesMade,
                    "both loads get every partial image: \(one.partials.count), \(two.partials.count) of \(spy.imagesMade)")
            #expect(one.partials.count >= 1)
            #expect(server.requestCount(for: "/photo.jpg") == 1)
        }
    }

    /// Partial decodes start at least ``PartialDecodeThrottle/minimumInterval`` apart, however
    /// often partial data arrives: over a load of `t`, at most `1 + t / interval` of them.
    @Test func partialDecodesAreThrottledInTime() async throws {
        let jpeg = try Self.progressiveJPEG(about: 300_000)
        try await withServer { server in
            // Partial data every few milliseconds: far more hand-outs than the interval allows decodes.
            server.route("/photo.jpg", LoopbackResponse.image(jpeg, contentType: "image/jpeg").throttled(bytesPerSecond: 1_500_000))
            let fixture = try ManagerFixture()
            let spy = SpyIncrementalCoder()
            let coders = ImageCodersManager(coders: [spy] + ImageCodersManager.defaultCoders)
            let clock = ContinuousClock()
            let start = clock.now
            let task = fixture.manager.imageTask(with: server.url("/photo.jpg"), options: .progressiveLoad,
                                                 context: ImageLoadContext(coders: coders))
            let observed = try await Self.observe(task)
            let elapsed = clock.now - start
            #expect(observed.result != nil)
            let allowed = 1 + Int(elapsed / PartialDecodeThrottle.minimumInterval)
            #expect(spy.updatesMade >= 1)
            #expect(spy.updatesMade <= allowed, "\(spy.updatesMade) partial decodes in \(elapsed): at most \(allowed)")
        }
    }

    @Test func cancellingAProgressiveLoadStopsTheDecodeInFlight() async throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 640, height: 480)
        try await withServer { server in
            server.route("/photo.jpg", LoopbackResponse.image(jpeg, contentType: "image/jpeg").throttled(bytesPerSecond: 100_000))
            let fixture = try ManagerFixture()
            let stuck = StuckIncrementalCoder()
            let coders = ImageCodersManager(coders: [stuck] + [fixture.decoder])
            let task = fixture.manager.imageTask(with: server.url("/photo.jpg"), options: .progressiveLoad,
                                                 context: ImageLoadContext(coders: coders))
            for await _ in stuck.arrivals { break }
            task.cancel()
            await waitUntil("the decode in flight saw the cancellation") { stuck.stoppedByCancellation }
            let (events, error) = await drain(task)
            #expect(error == .cancelled)
            #expect(!events.contains { if case .completed = $0 { true } else { false } })
            #expect(stuck.updates == 1, "no partial decode after the cancel")
            #expect(fixture.decoder.decodes == 0, "no final decode either")
        }
    }
}

extension ManagerFixture {
    /// The fixture's counting decoder for one-shot decodes, then the built-in coders, whose
    /// incremental decoders make the partial images.
    var progressiveCoders: ImageCodersManager {
        ImageCodersManager(coders: [decoder] + ImageCodersManager.defaultCoders)
    }
}

/// The real JPEG incremental decoder, counting decoders, updates (and how many run at once) and
/// the partial images they made.
final class SpyIncrementalCoder: ImageCoder {
    private struct Counts {
        var decoders = 0, updates = 0, images = 0, running = 0, maxRunning = 0
    }
    private let counts = Locked(Counts())

    var decodersMade: Int { counts.withLock { $0.decoders } }
    var updatesMade: Int { counts.withLock { $0.updates } }
    var imagesMade: Int { counts.withLock { $0.images } }
    var maxConcurrentUpdates: Int { counts.withLock { $0.maxRunning } }

    final class Decoder: IncrementalImageDecoder {
        let inner: any IncrementalImageDecoder
        let spy: SpyIncrementalCoder
        init(inner: any IncrementalImageDecoder, spy: SpyIncrementalCoder) { self.inner = inner; self.spy = spy }
        func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
            spy.counts.withLock { $0.updates += 1; $0.running += 1; $0.maxRunning = max($0.maxRunning, $0.running) }
            defer { spy.counts.withLock { $0.running -= 1 } }
            let image = try inner.update(with: data, isComplete: isComplete)
            if image != nil { spy.counts.withLock { $0.images += 1 } }
            return image
        }
    }

    func canDecode(_ data: Data) -> Bool { false }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage { throw WebImageError.unsupportedFormat("spy") }
    func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        guard let inner = JPEGCoder().makeIncrementalDecoder(for: format, options: options) else { return nil }
        counts.withLock { $0.decoders += 1 }
        return Decoder(inner: inner, spy: self)
    }
}

/// An incremental decoder whose first update stays in flight until its load cancels it.
final class StuckIncrementalCoder: ImageCoder {
    private let state = Locked((updates: 0, stopped: false))
    let arrivals: AsyncStream<Void>
    private let arrival: AsyncStream<Void>.Continuation

    init() { (arrivals, arrival) = AsyncStream.makeStream() }

    var updates: Int { state.withLock { $0.updates } }
    var stoppedByCancellation: Bool { state.withLock { $0.stopped } }

    final class Decoder: CancellableIncrementalDecoder {
        let cancellation = DecodeCancellation()
        let owner: StuckIncrementalCoder
        init(owner: StuckIncrementalCoder) { self.owner = owner }
        func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
            owner.state.withLock { $0.updates += 1 }
            owner.arrival.yield()
            // A decode that only its cancellation flag ends (bounded, so a failing test cannot hang).
            let deadline = ContinuousClock.now + .seconds(10)
            while !cancellation.isCancelled, ContinuousClock.now < deadline { usleep(1_000) }
            if cancellation.isCancelled { owner.state.withLock { $0.stopped = true } }
            throw WebImageError.cancelled
        }
    }

    func canDecode(_ data: Data) -> Bool { false }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage { throw WebImageError.unsupportedFormat("stuck") }
    func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        Decoder(owner: self)
    }
}
