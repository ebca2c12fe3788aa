import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

@Suite("ImageManager options", .timeLimit(.minutes(1)))
struct ImageManagerOptionsTests {
    @Test func failedURLIsSkippedUntilRetried() async throws {
        try await withServer { server in
            let fixture = try ManagerFixture()
            let url = server.url("/gone.jpg")
            #expect(await loadError { try await fixture.manager.loadImage(with: url) } == .httpStatus(404))
            #expect(fixture.manager.isFailedURL(url))
            #expect(await loadError { try await fixture.manager.loadImage(with: url) } == .blockedFailedURL)
            #expect(server.requestCount(for: "/gone.jpg") == 1)
            server.route("/gone.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let retried = try await fixture.manager.loadImage(with: url, options: .retryFailed)
            #expect(retried.cacheType == .none)
            #expect(server.requestCount(for: "/gone.jpg") == 2)
            #expect(!fixture.manager.isFailedURL(url))
        }
    }

    @Test func corruptDataIsAPermanentFailureAndTheListCanBeCleared() async throws {
        try await withServer { server in
            server.route("/bad.jpg", .image(Data([0xFF, 0xD8, 0xFF, 0xE0]) + testBytes(2_000), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/bad.jpg")
            #expect(await loadError { try await fixture.manager.loadImage(with: url) } != nil)
            #expect(fixture.manager.isFailedURL(url))
            fixture.manager.removeAllFailedURLs()
            #expect(!fixture.manager.isFailedURL(url))
            #expect(await loadError { try await fixture.manager.loadImage(with: url) } != .blockedFailedURL)
            #expect(server.requestCount(for: "/bad.jpg") == 2)
        }
    }

    @Test func transientFailuresAreNotRecorded() async throws {
        try await withServer { server in
            server.route("/reset.jpg", LoopbackResponse(body: .bytes(testBytes(50_000)), resetAfterBytes: 1_000))
            server.route("/busy.jpg", .status(503))
            server.route("/slow.jpg", LoopbackResponse(body: .bytes(testBytes(100)), delayBeforeHead: .seconds(5)))
            // A body cut short (the connection closed cleanly before its Content-Length): the
            // downloader retries it, so it is no reason to call the URL bad.
            server.route("/short.jpg", LoopbackResponse(body: .bytes(testBytes(1_000)), announcedLength: 5_000))
            let fixture = try ManagerFixture(downloader: ImageDownloaderConfiguration(timeout: .milliseconds(300)))
            for path in ["/reset.jpg", "/busy.jpg", "/slow.jpg", "/short.jpg"] {
                let error = await loadError { try await fixture.manager.loadImage(with: server.url(path)) }
                #expect(error?.isTransient == true, "\(path): \(String(describing: error))")
                #expect(!fixture.manager.isFailedURL(server.url(path)))
            }
            // A 501 is the server saying it will never do it: recorded.
            server.route("/never.jpg", .status(501))
            // With its own timeout: the fixture's 300 ms is for /slow.jpg, and a loaded machine's
            // start can keep a quick answer's bytes longer than that (seen in a full run).
            #expect(await loadError {
                try await fixture.manager.loadImage(with: server.url("/never.jpg"), context: ImageLoadContext(timeout: .seconds(30)))
            } == .httpStatus(501))
            #expect(fixture.manager.isFailedURL(server.url("/never.jpg")))
            let refused = URL(string: "http://127.0.0.1:1/nothing.jpg")!
            #expect(await loadError { try await fixture.manager.loadImage(with: refused) }?.code == "connectionFailed")
            #expect(!fixture.manager.isFailedURL(refused))
        }
    }

    @Test func priorityOptionsOrderTheDownloadQueue() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/first.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate))
            for name in ["low", "normal", "high"] { server.route("/\(name).jpg", .image(try sampleJPEG(), contentType: "image/jpeg")) }
            let fixture = try ManagerFixture(downloader: ImageDownloaderConfiguration(maxConcurrentDownloads: 1, timeout: .seconds(5)))
            let first = fixture.manager.imageTask(with: server.url("/first.jpg"))
            await server.waitForRequests(1, path: "/first.jpg")
            let low = fixture.manager.imageTask(with: server.url("/low.jpg"), options: .lowPriority)
            await waitUntil("low is queued") { fixture.downloader.queuedDownloadCount == 1 }
            let normal = fixture.manager.imageTask(with: server.url("/normal.jpg"))
            await waitUntil("normal is queued") { fixture.downloader.queuedDownloadCount == 2 }
            let high = fixture.manager.imageTask(with: server.url("/high.jpg"), options: .highPriority)
            await waitUntil("high is queued") { fixture.downloader.queuedDownloadCount == 3 }
            gate.open()
            for task in [first, low, normal, high] { _ = try await task.result }
            #expect(server.requests.map(\.path) == ["/first.jpg", "/high.jpg", "/normal.jpg", "/low.jpg"])
        }
    }

    @Test func raisingATaskPriorityRaisesItsQueuedDownload() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/first.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate))
            for name in ["a", "b"] { server.route("/\(name).jpg", .image(try sampleJPEG(), contentType: "image/jpeg")) }
            let fixture = try ManagerFixture(downloader: ImageDownloaderConfiguration(maxConcurrentDownloads: 1, timeout: .seconds(5)))
            let first = fixture.manager.imageTask(with: server.url("/first.jpg"))
            await server.waitForRequests(1, path: "/first.jpg")
            let a = fixture.manager.imageTask(with: server.url("/a.jpg"))
            await waitUntil("a is queued") { fixture.downloader.queuedDownloadCount == 1 }
            let b = fixture.manager.imageTask(with: server.url("/b.jpg"), options: .lowPriority)
            await waitUntil("b is queued") { fixture.downloader.queuedDownloadCount == 2 }
            b.setPriority(.veryHigh)
            #expect(b.priority == .veryHigh)
            gate.open()
            for task in [first, a, b] { _ = try await task.result }
            #expect(server.requests.map(\.path) == ["/first.jpg", "/b.jpg", "/a.jpg"])
        }
    }

    @Test func cacheMemoryOnlyNeverWritesToDisk() async throws {
        try await withServer { server in
            server.route("/m.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/m.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: [.cacheMemoryOnly, .waitStoreCache])
            #expect(await fixture.cache.contains(key: url.absoluteString) == .memory)
            #expect(await fixture.cache.diskCache.contains(key: url.absoluteString) == false)
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            #expect(await fixture.cache.diskCache.contains(key: url.absoluteString) == false, "a memory hit stores nothing")
        }
    }

    @Test func waitStoreCacheDeliversAfterTheDiskWrite() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG()
            server.route("/w.jpg", .image(jpeg, contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/w.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            let entry = await fixture.cache.diskCache.entry(forKey: url.absoluteString)
            #expect(entry?.data == jpeg)
            #expect(entry?.metadata.contentType == "image/jpeg")
            #expect(entry?.metadata.originalURL == url.absoluteString)
        }
    }

    @Test func fromCacheOnlyNeverDownloads() async throws {
        try await withServer { server in
            server.route("/x.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/x.jpg")
            #expect(await loadError { try await fixture.manager.loadImage(with: url, options: .fromCacheOnly) } == .notCached)
            #expect(server.totalRequestCount == 0)
            #expect(!fixture.manager.isFailedURL(url))
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            #expect(try await fixture.manager.loadImage(with: url, options: .fromCacheOnly).cacheType == .memory)
        }
    }

    @Test func fromLoaderOnlySkipsTheCacheQuery() async throws {
        try await withServer { server in
            server.route("/l.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/l.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            let again = try await fixture.manager.loadImage(with: url, options: .fromLoaderOnly)
            #expect(again.cacheType == .none)
            #expect(server.requestCount(for: "/l.jpg") == 2)
        }
    }

    @Test func queryMemoryDataTooReadsTheBytes() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG()
            server.route("/q.jpg", .image(jpeg, contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/q.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            let plain = try await fixture.manager.loadImage(with: url)
            #expect(plain.cacheType == .memory && plain.data == nil)
            let withData = try await fixture.manager.loadImage(with: url, options: .queryMemoryDataToo)
            #expect(withData.cacheType == .memory && withData.data == jpeg)
        }
    }

    @Test func refreshCachedWith304DeliversTheCachedImageOnce() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG()
            var response = LoopbackResponse.image(jpeg, contentType: "image/jpeg")
            response.etag = "\"v1\""
            server.route("/r.jpg", response)
            let fixture = try ManagerFixture()
            let url = server.url("/r.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            let task = fixture.manager.imageTask(with: url, options: .refreshCached)
            let (events, error) = await drain(task)
            #expect(error == nil)
            let delivered = events.compactMap { event -> ImageCacheType? in
                switch event {
                case .cachedImage(let result): return result.cacheType
                case .completed(let result): return result.cacheType
                default: return nil
                }
            }
            #expect(delivered == [.memory, .memory], "the cached image, then the same confirmed")
            #expect(server.requests.last?.headers["if-none-match"] == "\"v1\"")
            #expect(server.requestCount(for: "/r.jpg") == 2)
        }
    }

    @Test func refreshCachedWith200DeliversTheNewImage() async throws {
        try await withServer { server in
            var old = LoopbackResponse.image(try sampleJPEG(width: 30, height: 30), contentType: "image/jpeg")
            old.etag = "\"v1\""
            server.route("/r.jpg", old)
            let fixture = try ManagerFixture()
            let url = server.url("/r.jpg")
            _ = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            await fixture.cache.clearMemory()
            let newJPEG = try sampleJPEG(width: 50, height: 40)
            var new = LoopbackResponse.image(newJPEG, contentType: "image/jpeg")
            new.etag = "\"v2\""
            server.route("/r.jpg", new)
            let task = fixture.manager.imageTask(with: url, options: [.refreshCached, .waitStoreCache])
            let (events, error) = await drain(task)
            #expect(error == nil)
            guard events.count >= 2, case .cachedImage(let cached) = events.first, case .completed(let fresh) = events.last else {
                Issue.record("expected a cached image then a new one, got \(events.count) events")
                return
            }
            #expect(cached.cacheType == .disk && cached.image.width == 30)
            #expect(fresh.cacheType == .none && fresh.image.width == 50)
            #expect(server.requests.last?.headers["if-none-match"] == "\"v1\"")
            let stored = await fixture.cache.diskCache.entry(forKey: url.absoluteString)
            #expect(stored?.data == newJPEG && stored?.metadata.etag == "\"v2\"")
            #expect(try await fixture.manager.loadImage(with: url).image.width == 50)
        }
    }

    @Test func scaleDownLargeImagesDecodesUnderTheLimit() async throws {
        try await withServer { server in
            server.route("/big.jpg", .image(try sampleJPEG(width: 400, height: 300), contentType: "image/jpeg"))
            let fixture = try ManagerFixture(manager: ImageManagerConfiguration(scaleDownPixelLimit: 20_000))
            let url = server.url("/big.jpg")
            let small = try await fixture.manager.loadImage(with: url, options: .scaleDownLargeImages)
            #expect(small.image.width * small.image.height <= 20_000)
            #expect(small.image.width > 0 && abs(Double(small.image.width) / Double(small.image.height) - 4.0 / 3.0) < 0.1)
            let full = try await fixture.manager.loadImage(with: url, options: .fromLoaderOnly)
            #expect(full.image.width == 400)
        }
    }

    @Test func decodeFirstFrameOnlyAndTransformAnimatedImage() async throws {
        try await withServer { server in
            server.route("/anim.webp", .image(try sampleAnimatedWebP(frames: 3), contentType: "image/webp"))
            let fixture = try ManagerFixture()
            let url = server.url("/anim.webp")
            let all = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            #expect(all.image.frames.count == 3)
            let first = try await fixture.manager.loadImage(with: url, options: .decodeFirstFrameOnly)
            #expect(first.image.frames.count == 1)
            #expect(first.cacheKey != all.cacheKey)
            let flip = FlipTransformer(.horizontal)
            let untouched = try await fixture.manager.loadImage(with: url, context: ImageLoadContext(transformer: flip))
            let transformed = try await fixture.manager.loadImage(with: url, options: .transformAnimatedImage,
                                                                  context: ImageLoadContext(transformer: PipelineTransformer([flip, GrayscaleTransformer()])))
            #expect(untouched.image.frames.count == 3)
            #expect(untouched.image.bitmap.pixel(x: 0, y: 0)! == all.image.bitmap.pixel(x: 0, y: 0)!)
            #expect(transformed.image.frames.count == 3)
            let pixel = transformed.image.bitmap.pixel(x: 0, y: 0)!
            #expect(pixel.r == pixel.g && pixel.g == pixel.b)
            #expect(server.requestCount(for: "/anim.webp") == 1)
        }
    }

    @Test func progressiveLoadDeliversPartialImages() async throws {
        try await withServer { server in
            let png = try SampleImages.encoded(.png, width: 200, height: 200)
            // Slow enough that each hand-out of partial data (8 KB apart at least) comes after
            // PartialDecodeThrottle.minimumInterval.
            server.route("/prog.png", LoopbackResponse(headers: ["Content-Type": "image/png"], body: .bytes(png))
                .throttled(bytesPerSecond: 40_000))
            let fixture = try ManagerFixture()
            let coders = ImageCodersManager(coders: [PreviewCoder()] + ImageCodersManager.defaultCoders)
            let task = fixture.manager.imageTask(with: server.url("/prog.png"), options: .progressiveLoad,
                                                 context: ImageLoadContext(coders: coders))
            let (events, error) = await drain(task)
            #expect(error == nil)
            let partials = events.filter { if case .partialImage = $0 { true } else { false } }
            #expect(partials.count >= 2)
            guard case .completed(let result) = events.last else { Issue.record("no result"); return }
            #expect(result.image.width == 200)

            let plain = fixture.manager.imageTask(with: server.url("/prog.png"), options: .fromLoaderOnly, context: ImageLoadContext(coders: coders))
            let (plainEvents, _) = await drain(plain)
            #expect(!plainEvents.contains { if case .partialImage = $0 { true } else { false } })
        }
    }
}

/// A coder whose incremental decoder shows a 1-pixel-high preview per update; full decodes go
/// to the real coders.
private struct PreviewCoder: ImageCoder {
    final class Preview: IncrementalImageDecoder {
        func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
            DecodedImage(bitmap: try Bitmap(width: max(1, data.count / 1024), height: 1, filledWith: (9, 9, 9, 255)), hasAlpha: false)
        }
    }
    func canDecode(_ data: Data) -> Bool { false }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage { throw WebImageError.unsupportedFormat("preview only") }
    func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .png ? Preview() : nil
    }
}
