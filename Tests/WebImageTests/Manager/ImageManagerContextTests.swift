import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

@Suite("ImageManager context", .timeLimit(.minutes(1)))
struct ImageManagerContextTests {
    @Test func cacheKeyFilterChoosesTheKeyOrSkipsCaching() async throws {
        try await withServer { server in
            server.route("/k.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/k.jpg?token=1")
            let stripped: CacheKeyFilter = { url in url.path }
            let keyed = try await fixture.manager.loadImage(with: url, options: .waitStoreCache, context: ImageLoadContext(cacheKeyFilter: stripped))
            #expect(keyed.cacheKey == "/k.jpg")
            #expect(await fixture.cache.contains(key: "/k.jpg") == .memory)
            let other = try await fixture.manager.loadImage(with: server.url("/k.jpg?token=2"), context: ImageLoadContext(cacheKeyFilter: stripped))
            #expect(other.cacheType == .memory, "another token, same key")

            let uncached = try await fixture.manager.loadImage(with: server.url("/k.jpg?nocache"), options: .waitStoreCache,
                                                               context: ImageLoadContext(cacheKeyFilter: { _ in nil }))
            #expect(uncached.cacheKey == nil && uncached.cacheType == .none)
            #expect(await fixture.cache.contains(key: server.url("/k.jpg?nocache").absoluteString) == .none)
            #expect(server.requestCount(for: "/k.jpg") == 2)
        }
    }

    @Test func managerWideCacheKeyFilter() async throws {
        try await withServer { server in
            server.route("/w.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture(manager: ImageManagerConfiguration(cacheKeyFilter: { "key:" + $0.lastPathComponent }))
            let result = try await fixture.manager.loadImage(with: server.url("/w.jpg"), options: .waitStoreCache)
            #expect(result.cacheKey == "key:w.jpg")
            #expect(fixture.manager.cacheKey(for: server.url("/w.jpg")) == "key:w.jpg")
            #expect(await fixture.manager.diskImageExists(for: server.url("/w.jpg")))
        }
    }

    @Test func parallelDecodingSettingReachesTheDecoder() async throws {
        try await withServer { server in
            server.route("/p.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let serial = try ManagerFixture(manager: ImageManagerConfiguration(parallelDecoding: false))
            _ = try await serial.manager.loadImage(with: server.url("/p.jpg"))
            #expect(serial.decoder.lastOptions?.parallelDecoding == false)
            let parallel = try ManagerFixture()
            _ = try await parallel.manager.loadImage(with: server.url("/p.jpg"))
            #expect(parallel.decoder.lastOptions?.parallelDecoding == true)
        }
    }

    @Test func customCacheLoaderAndCoders() async throws {
        try await withServer { server in
            let fixture = try ManagerFixture()
            let other = try TemporaryDirectory()
            let otherCache = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: other.url)))
            let png = try SampleImages.encoded(.png, width: 12, height: 7)
            let loader = InMemoryLoader(files: ["mem://one.png": png])
            let decoder = CountingDecoder()
            let context = ImageLoadContext(cache: otherCache, loader: loader, coders: ImageCodersManager(coders: [decoder]))
            let url = URL(string: "mem://one.png")!
            let result = try await fixture.manager.loadImage(with: url, options: .waitStoreCache, context: context)
            #expect(result.image.width == 12 && result.data == png)
            #expect(decoder.decodes == 1 && fixture.decoder.decodes == 0)
            #expect(await otherCache.contains(key: url.absoluteString) == .memory)
            #expect(await fixture.cache.contains(key: url.absoluteString) == .none)
            #expect(loader.loads == 1)
            // The manager's own loader cannot load this scheme.
            #expect(await loadError { try await fixture.manager.loadImage(with: url) } == .invalidURL(url.absoluteString))
        }
    }

    @Test func thumbnailsAreCachedApartAndReuseTheOriginalBytes() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 640, height: 480)
            server.route("/photo.jpg", .image(jpeg, contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/photo.jpg")
            let thumb = try await fixture.manager.loadImage(with: url, options: .waitStoreCache, context: ImageLoadContext(maxPixelSize: 100))
            #expect(max(thumb.image.width, thumb.image.height) <= 100)
            #expect(thumb.cacheKey == url.absoluteString + "-thumbnail(100)")
            #expect(await fixture.cache.contains(key: url.absoluteString) == .disk, "the original bytes, not decoded into memory")
            let again = try await fixture.manager.loadImage(with: url, context: ImageLoadContext(maxPixelSize: 100))
            #expect(again.cacheType == .memory && again.image.width == thumb.image.width)
            let other = try await fixture.manager.loadImage(with: url, context: ImageLoadContext(maxPixelSize: 50))
            #expect(other.cacheType == .disk && max(other.image.width, other.image.height) <= 50)
            let full = try await fixture.manager.loadImage(with: url)
            #expect(full.cacheType == .disk && full.image.width == 640)
            #expect(server.requestCount(for: "/photo.jpg") == 1)
        }
    }

    @Test func newTransformOfACachedImageIsNotDownloadedAgain() async throws {
        try await withServer { server in
            server.route("/base.jpg", .image(try sampleJPEG(width: 120, height: 90), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/base.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            let crop = CropTransformer(x: 10, y: 10, width: 30, height: 20)
            let cropped = try await fixture.manager.loadImage(with: url, context: ImageLoadContext(transformer: crop))
            #expect(cropped.image.width == 30 && cropped.image.height == 20)
            #expect(cropped.cacheType == .memory, "made from the cached original")
            #expect(server.requestCount(for: "/base.jpg") == 1)
            // The transformed image is stored on disk under its own key: a new process would find it.
            await waitUntilStored(fixture.cache, key: url.absoluteString + "-" + crop.identifier)
            await fixture.cache.clearMemory()
            let fromDisk = try await fixture.manager.loadImage(with: url, context: ImageLoadContext(transformer: crop))
            #expect(fromDisk.cacheType == .disk && fromDisk.image.width == 30)
        }
    }

    @Test func priorityHeadersAndTimeoutReachTheRequest() async throws {
        try await withServer { server in
            server.route("/h.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            server.route("/stall.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), delayBeforeHead: .seconds(5)))
            let fixture = try ManagerFixture()
            // A minute without bytes, not the default 15 s: with every suite started at once on two
            // cores, CI saw this load starved past the default (the first 15 s of the run).
            let task = fixture.manager.imageTask(with: server.url("/h.jpg"),
                                                 context: ImageLoadContext(priority: .veryHigh, headers: ["X-Client": "tests"],
                                                                           timeout: .seconds(60)))
            #expect(task.priority == .veryHigh)
            _ = try await task.result
            #expect(server.requests.first?.headers["x-client"] == "tests")
            let stalled = await loadError {
                try await fixture.manager.loadImage(with: server.url("/stall.jpg"), context: ImageLoadContext(timeout: .milliseconds(200)))
            }
            #expect(stalled == .timedOut)
        }
    }

    @Test func requestAndResponseModifiers() async throws {
        try await withServer { server in
            server.route("/mod.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/mod.jpg")
            let signed = ImageLoadContext(requestModifier: { request in
                var request = request
                request.headers["Authorization"] = "Bearer abc"
                return request
            })
            _ = try await fixture.manager.loadImage(with: url, options: .fromLoaderOnly, context: signed)
            #expect(server.requests.last?.headers["authorization"] == "Bearer abc")

            let vetoed = await loadError {
                try await fixture.manager.loadImage(with: url, options: .fromLoaderOnly, context: ImageLoadContext(requestModifier: { _ in nil }))
            }
            #expect(vetoed?.code == "rejected")
            #expect(server.requestCount(for: "/mod.jpg") == 1)

            let refused = await loadError {
                try await fixture.manager.loadImage(with: url, options: .fromLoaderOnly,
                                                    context: ImageLoadContext(responseModifier: { $0.mimeType == "image/png" }))
            }
            #expect(refused?.code == "rejected")
            #expect(!fixture.manager.isFailedURL(url), "a local veto says nothing about the URL")
        }
    }

    @Test func shouldDownloadCanDecline() async throws {
        try await withServer { server in
            server.route("/no.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture(manager: ImageManagerConfiguration(shouldDownload: { !$0.path.hasPrefix("/no") }))
            let declined = await loadError { try await fixture.manager.loadImage(with: server.url("/no.jpg")) }
            #expect(declined?.code == "rejected")
            #expect(server.totalRequestCount == 0)
            let allowed = try await fixture.manager.loadImage(with: server.url("/no.jpg"), context: ImageLoadContext(shouldDownload: { _ in true }))
            #expect(allowed.cacheType == .none)
        }
    }
    @Test func aCustomLoaderSeesPriorityChanges() async throws {
        let fixture = try ManagerFixture()
        let loader = PriorityGatedLoader(data: try SampleImages.encoded(.png, width: 4, height: 3))
        let task = fixture.manager.imageTask(with: URL(string: "mem://gated.png")!, context: ImageLoadContext(loader: loader))
        for await _ in loader.started { break }
        // The loader answers only once a priority change reaches it.
        task.setPriority(.veryHigh)
        let result = try await task.result
        #expect(result.cacheType == .none)
        #expect(loader.priorities == [.veryHigh])
    }
}

/// Waits until `key` is on disk (stores of a load without `waitStoreCache` run behind delivery).
func waitUntilStored(_ cache: ImageCache, key: String) async {
    for _ in 0..<10_000 {
        if await cache.diskCache.contains(key: key) { return }
        try? await Task.sleep(for: .milliseconds(1))
    }
    Issue.record("\(key) never reached the disk")
}

/// Serves bytes from a dictionary under a scheme of its own.
final class InMemoryLoader: ImageLoader {
    let files: [String: Data]
    private let count = Locked(0)
    init(files: [String: Data]) { self.files = files }
    var loads: Int { count.withLock { $0 } }
    func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }
    func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        count.withLock { $0 += 1 }
        let data = files[request.url.absoluteString]
        return AsyncThrowingStream { continuation in
            guard let data else { return continuation.finish(throwing: WebImageError.httpStatus(404)) }
            let response = ImageLoadResponse(url: request.url, headers: ["content-type": "image/png"], expectedContentLength: Int64(data.count))
            continuation.yield(.response(response))
            continuation.yield(.progress(received: Int64(data.count), expected: Int64(data.count)))
            continuation.yield(.completed(data, response))
            continuation.finish()
        }
    }
}

/// Answers a load only when a priority change reaches it through ``ImageLoader/start(_:)``.
final class PriorityGatedLoader: ImageLoader {
    let data: Data
    /// Yields when the manager starts a load.
    let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    private let seen = Locked<[LoadPriority]>([])

    init(data: Data) {
        self.data = data
        (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    var priorities: [LoadPriority] { seen.withLock { $0 } }

    func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }

    func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> { start(request).events }

    func start(_ request: ImageLoadRequest) -> ImageLoadHandle {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        startedContinuation.yield()
        let response = ImageLoadResponse(url: request.url, headers: ["content-type": "image/png"])
        return ImageLoadHandle(events: events, setPriority: { [self] priority in
            seen.withLock { $0.append(priority) }
            continuation.yield(.completed(data, response))
            continuation.finish()
        })
    }
}
