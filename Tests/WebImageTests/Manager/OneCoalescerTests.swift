import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Issue #30: a load's bytes are coalesced once, by the downloader. The decode stage is the
/// downloader's caller (no fetch stage of the pipeline's own), and a custom loader sits under
/// a downloader as its transport, so it gets the downloader's queue and coalescing.
@Suite("One coalescer: the downloader", .timeLimit(.minutes(1)))
struct OneCoalescerTests {
    @Test func aManagerLoadAndADirectDownloadShareOneRequest() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            let jpeg = try sampleJPEG()
            server.route("/one.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(jpeg), gate: gate))
            let fixture = try ManagerFixture()
            let url = server.url("/one.jpg")
            let task = fixture.manager.imageTask(with: url)
            await server.waitForRequests(1, path: "/one.jpg")
            // The load waits in one shared work of the pipeline (its decode stage), which is a
            // caller of the downloader's: there is no fetch stage between them.
            #expect(fixture.manager.stages.pool.count == 1)
            let token = fixture.downloader.download(ImageLoadRequest(url: url))
            gate.open()
            let direct = await collect(token.events)
            #expect(direct.data == jpeg)
            #expect(try await task.result.image.width == 64)
            #expect(server.requestCount(for: "/one.jpg") == 1)
        }
    }

    @Test func loadsWhoseRequestsMatchShareOneDownloadAndOneDecode() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/same.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG()),
                                                       gate: gate, gatePoint: .afterBodyBytes(100)))
            let fixture = try ManagerFixture()
            let url = server.url("/same.jpg")
            // A timeout of its own, or a request modifier that leaves the request as it is, makes
            // the same request: the same download, so the same decode.
            let contexts = [ImageLoadContext(), ImageLoadContext(timeout: .seconds(7)),
                            ImageLoadContext(requestModifier: { $0 })]
            let tasks = contexts.map { fixture.manager.imageTask(with: url, context: $0) }
            // A load hears of progress only once it has joined the running download.
            for task in tasks {
                for try await event in task.events { if case .progress = event { break } }
            }
            gate.open()
            for task in tasks { #expect(try await task.result.image.width == 64) }
            #expect(server.requestCount(for: "/same.jpg") == 1)
            #expect(fixture.decoder.decodes == 1)
        }
    }

    @Test func aCustomLoaderTakesTheDownloadersQueueAndCoalescing() async throws {
        let fixture = try ManagerFixture(downloader: ImageDownloaderConfiguration(maxConcurrentDownloads: 1, timeout: .seconds(5)))
        let png = try SampleImages.encoded(.png, width: 4, height: 3)
        let loader = HeldLoader(data: png)
        let context = ImageLoadContext(loader: loader)
        let a = URL(string: "held://a.png")!, b = URL(string: "held://b.png")!
        let tasks = [a: (0..<3).map { _ in fixture.manager.imageTask(with: a, context: context) },
                     b: [fixture.manager.imageTask(with: b, context: context)]]
        // One slot: one URL's load runs in it, the other's waits in the downloader's queue.
        await waitUntil("one runs, the other is queued") {
            loader.started.count == 1 && fixture.downloader.runningDownloadCount == 1 && fixture.downloader.queuedDownloadCount == 1
        }
        let running = loader.started[0], queued = running == a ? b : a
        // A load hears of progress only once it has joined the running load.
        for task in tasks[running, default: []] {
            for try await event in task.events { if case .progress = event { break } }
        }
        loader.release(running)
        for task in tasks[running, default: []] { #expect(try await task.result.image.width == 4) }
        await waitUntil("the other starts once the slot is free") { loader.started == [running, queued] }
        for task in tasks[queued, default: []] {
            for try await event in task.events { if case .progress = event { break } }
        }
        loader.release(queued)
        for task in tasks[queued, default: []] { #expect(try await task.result.image.width == 4) }
        #expect(loader.started == [running, queued], "the three loads of a reached the loader once")
    }

    @Test func aManagerMadeWithACustomLoaderCoalescesItsLoads() async throws {
        let png = try SampleImages.encoded(.png, width: 5, height: 2)
        let loader = HeldLoader(data: png)
        let directory = try TemporaryDirectory()
        let cache = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)))
        let manager = ImageManager(cache: cache, loader: loader)
        let url = URL(string: "held://only.png")!
        let tasks = (0..<4).map { _ in manager.imageTask(with: url, options: .fromLoaderOnly) }
        // A load hears of progress only once it has joined the running load.
        for task in tasks {
            for try await event in task.events { if case .progress = event { break } }
        }
        loader.release(url)
        for task in tasks { #expect(try await task.result.image.width == 5) }
        #expect(loader.started == [url])
    }
}

/// Serves the same bytes under the `held` scheme, each load held until the test releases its URL.
final class HeldLoader: ImageLoader {
    let data: Data
    private struct State {
        var started: [URL] = []
        var held: [URL: [AsyncThrowingStream<ImageLoadEvent, any Error>.Continuation]] = [:]
        var released: Set<URL> = []
    }
    private let state = Locked(State())

    init(data: Data) { self.data = data }

    /// The URLs whose loads started, in order.
    var started: [URL] { state.withLock { $0.started } }

    func canLoad(_ url: URL) -> Bool { url.scheme == "held" }

    func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let url = request.url
        let released = state.withLock { state -> Bool in
            state.started.append(url)
            if state.released.contains(url) { return true }
            state.held[url, default: []].append(continuation)
            return false
        }
        if released {
            complete(continuation, url)
        } else {
            continuation.yield(.response(response(url)))
            continuation.yield(.progress(received: 1, expected: Int64(data.count)))
        }
        return events
    }

    /// Completes the held loads of `url`, and any later ones at once.
    func release(_ url: URL) {
        let held = state.withLock { state in
            state.released.insert(url)
            return state.held.removeValue(forKey: url) ?? []
        }
        for continuation in held { complete(continuation, url) }
    }

    private func complete(_ continuation: AsyncThrowingStream<ImageLoadEvent, any Error>.Continuation, _ url: URL) {
        continuation.yield(.completed(data, response(url)))
        continuation.finish()
    }

    private func response(_ url: URL) -> ImageLoadResponse {
        ImageLoadResponse(url: url, headers: ["content-type": "image/png"], expectedContentLength: Int64(data.count))
    }
}
