import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

@Suite("ImageManager shared stages and cancellation", .timeLimit(.minutes(1)))
struct ImageManagerSharingTests {
    @Test func concurrentLoadsDownloadAndDecodeOnce() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/shared.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG()), gate: gate))
            let fixture = try ManagerFixture()
            let tasks = (0..<20).map { _ in fixture.manager.imageTask(with: server.url("/shared.jpg")) }
            await server.waitForRequests(1, path: "/shared.jpg")
            gate.open()
            for task in tasks { #expect(try await task.result.image.width == 64) }
            #expect(server.requestCount(for: "/shared.jpg") == 1)
            #expect(fixture.decoder.decodes == 1)
        }
    }

    @Test func transformPrefixesAreShared() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            // The body is held after its first bytes, so every load that has joined the chain
            // hears of the download's progress before anything can finish.
            server.route("/t.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 200, height: 100)),
                                                    gate: gate, gatePoint: .afterBodyBytes(100)))
            let fixture = try ManagerFixture()
            let resizeRuns = Counter(), roundRuns = Counter()
            let resize = CountingTransformer(ResizeTransformer(width: 50, height: 50, mode: .fill), runs: resizeRuns)
            let round = CountingTransformer(RoundCornerTransformer(radius: 8), runs: roundRuns)
            let url = server.url("/t.jpg")
            let resized = fixture.manager.imageTask(with: url, context: ImageLoadContext(transformer: resize))
            let rounded = fixture.manager.imageTask(with: url, context: ImageLoadContext(transformer: PipelineTransformer([resize, round])))
            let plain = fixture.manager.imageTask(with: url)
            // Opening the gate once the first request arrived raced the other loads, still in their
            // cache queries: one that came out after the shared stages ended found the bytes the
            // first load had stored and decoded and resized them again (decodes 2, resizes 2).
            // A load hears of progress only once its whole chain has joined the running fetch.
            for task in [resized, rounded, plain] {
                for try await event in task.events { if case .progress = event { break } }
            }
            gate.open()
            let a = try await resized.result, b = try await rounded.result, c = try await plain.result
            #expect(a.image.width == 50 && b.image.width == 50 && c.image.width == 200)
            #expect(resizeRuns.count == 1)
            #expect(roundRuns.count == 1)
            #expect(fixture.decoder.decodes == 1)
            #expect(server.requestCount(for: "/t.jpg") == 1)
            #expect(b.cacheKey == url.absoluteString + "-" + resize.identifier + "|" + round.identifier)
            #expect(b.image.bitmap.pixel(x: 0, y: 0)?.a == 0, "the corner is rounded away")
        }
    }

    @Test func cancellingOneOfTwoLoadsKeepsTheSharedWork() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/two.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG()), gate: gate))
            let fixture = try ManagerFixture()
            let leaving = fixture.manager.imageTask(with: server.url("/two.jpg"))
            let staying = fixture.manager.imageTask(with: server.url("/two.jpg"))
            await server.waitForRequests(1, path: "/two.jpg")
            leaving.cancel()
            #expect(await loadError { try await leaving.result } == .cancelled)
            gate.open()
            #expect(try await staying.result.image.width == 64)
            #expect(server.requestCount(for: "/two.jpg") == 1)
            #expect(server.abortedCount(for: "/two.jpg") == 0)
        }
    }

    @Test func cancellingWhileDownloadingStopsTheRequestAndStoresNothing() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/d.jpg", LoopbackResponse(body: .bytes(try sampleJPEG(width: 300, height: 300)), gate: gate, gatePoint: .afterBodyBytes(500)))
            let fixture = try ManagerFixture()
            let task = fixture.manager.imageTask(with: server.url("/d.jpg"))
            for try await event in task.events { if case .progress = event { break } }
            task.cancel()
            #expect(await loadError { try await task.result } == .cancelled)
            await server.waitForAborted(1, path: "/d.jpg")
            gate.open()
            #expect(await fixture.cache.contains(key: server.url("/d.jpg").absoluteString) == .none)
            #expect(!fixture.manager.isFailedURL(server.url("/d.jpg")), "cancellation is not a failure of the URL")
            #expect(fixture.manager.stages.pool.count == 0)
        }
    }

    @Test func cancellingWhileDecodingDeliversNothing() async throws {
        try await withServer { server in
            server.route("/slowdecode.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let hold = DecodeHold()
            let fixture = try ManagerFixture(hold: hold)
            let task = fixture.manager.imageTask(with: server.url("/slowdecode.jpg"), options: .waitStoreCache)
            for await _ in hold.arrivals { break }
            task.cancel()
            let (events, error) = await drain(task)
            #expect(error == .cancelled)
            #expect(!events.contains { if case .completed = $0 { true } else { false } })
            hold.release()
            #expect(await loadError { try await task.result } == .cancelled)
            #expect(await fixture.cache.contains(key: server.url("/slowdecode.jpg").absoluteString) == .none)
        }
    }

    @Test func cancellingBeforeTheCacheQueryReturns() async throws {
        try await withServer { server in
            server.route("/q.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let cache = HeldCache(inner: fixture.cache)
            let task = fixture.manager.imageTask(with: server.url("/q.jpg"), context: ImageLoadContext(cache: cache))
            for await _ in cache.queries { break }
            task.cancel()
            cache.release()
            #expect(await loadError { try await task.result } == .cancelled)
            #expect(server.totalRequestCount == 0, "a load cancelled during its cache query never downloads")
        }
    }

    @Test func awaitingTaskCancellationCancelsTheLoad() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/wait.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate, gatePoint: .afterBodyBytes(100)))
            let fixture = try ManagerFixture()
            let caller = Task { try await fixture.manager.loadImage(with: server.url("/wait.jpg")) }
            await server.waitForRequests(1, path: "/wait.jpg")
            caller.cancel()
            #expect(await loadError { try await caller.value } == .cancelled)
            await server.waitForAborted(1, path: "/wait.jpg")
            gate.open()
        }
    }
}

/// A cache whose queries wait until the test releases them.
private final class HeldCache: ImageCaching {
    let inner: ImageCache
    let queries: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation
    private let gate = LoopbackGate()

    init(inner: ImageCache) {
        self.inner = inner
        (queries, arrived) = AsyncStream.makeStream()
    }

    func release() { gate.open() }

    func query(key: String, options: ImageCacheQueryOptions, decodeOptions: DecodeOptions) async -> ImageCacheResult {
        arrived.yield()
        await gate.wait()
        return await inner.query(key: key, options: options, decodeOptions: decodeOptions)
    }
    func store(_ image: DecodedImage?, data: Data?, metadata: ImageCacheMetadata?, key: String, to target: ImageCacheStoreTarget) async {
        await inner.store(image, data: data, metadata: metadata, key: key, to: target)
    }
    func contains(key: String) async -> ImageCacheType { await inner.contains(key: key) }
    func remove(key: String, fromDisk: Bool) async { await inner.remove(key: key, fromDisk: fromDisk) }
    func clearMemory() async { await inner.clearMemory() }
    func clearDisk() async { await inner.clearDisk() }
}
