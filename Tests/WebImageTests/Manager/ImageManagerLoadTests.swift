import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

@Suite("ImageManager loading", .timeLimit(.minutes(1)))
struct ImageManagerLoadTests {
    @Test func loadsThenHitsMemoryThenDisk() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 80, height: 60)
            server.route("/a.jpg", .image(jpeg, contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/a.jpg")
            let first = try await fixture.manager.loadImage(with: url, options: .waitStoreCache)
            #expect(first.cacheType == .none)
            #expect(first.image.width == 80 && first.image.height == 60)
            #expect(first.data == jpeg)
            #expect(first.cacheKey == url.absoluteString)
            #expect(first.response?.statusCode == 200)
            let second = try await fixture.manager.loadImage(with: url)
            #expect(second.cacheType == .memory)
            await fixture.cache.clearMemory()
            let third = try await fixture.manager.loadImage(with: url)
            #expect(third.cacheType == .disk && third.data == jpeg)
            #expect(server.requestCount(for: "/a.jpg") == 1)
            #expect(fixture.decoder.decodes == 2)
            #expect(!fixture.manager.isRunning)
        }
    }

    @Test func finalURLFollowsRedirects() async throws {
        try await withServer { server in
            server.route("/old", .redirect(to: "/new.jpg"))
            server.route("/new.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let result = try await fixture.manager.loadImage(with: server.url("/old"))
            #expect(result.url.path == "/new.jpg")
            #expect(result.cacheKey == server.url("/old").absoluteString)
        }
    }

    @Test func taskReportsProgressThenCompletes() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 400, height: 300)
            server.route("/p.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(jpeg),
                                                    drip: (chunkSize: 4096, interval: .milliseconds(1))))
            let fixture = try ManagerFixture()
            let task = fixture.manager.imageTask(with: server.url("/p.jpg"))
            let (events, error) = await drain(task)
            #expect(error == nil)
            let progress = events.compactMap { event -> Int64? in
                if case .progress(let received, _) = event { return received }
                return nil
            }
            #expect(progress.count >= 2)
            #expect(progress == progress.sorted())
            guard case .completed(let result) = events.last else {
                Issue.record("no completed event")
                return
            }
            #expect(result.image.width == 400)
            #expect(try await task.result.image.height == 300)
        }
    }

    @Test func completionHandlerFormCallsBackOnTheCallbackQueue() async throws {
        try await withServer { server in
            server.route("/c.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let queue = DispatchQueue(label: "callbacks")
            let marker = DispatchSpecificKey<Int>()
            queue.setSpecific(key: marker, value: 7)
            let onQueue: Bool = await withCheckedContinuation { continuation in
                fixture.manager.loadImage(with: server.url("/c.jpg"), context: ImageLoadContext(callbackQueue: queue)) { result in
                    continuation.resume(returning: (try? result.get()) != nil && DispatchQueue.getSpecific(key: marker) == 7)
                }
            }
            #expect(onQueue)
            let failure: WebImageError? = await withCheckedContinuation { continuation in
                fixture.manager.loadImage(with: server.url("/missing")) { result in
                    if case .failure(let error) = result { continuation.resume(returning: error) } else { continuation.resume(returning: nil) }
                }
            }
            #expect(failure == .httpStatus(404))
        }
    }

    @Test func errorsAreTyped() async throws {
        try await withServer { server in
            server.route("/garbage", .image(testBytes(5_000), contentType: "image/jpeg"))
            server.route("/cut.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), announcedLength: 100_000))
            let fixture = try ManagerFixture()
            let garbage = await loadError { try await fixture.manager.loadImage(with: server.url("/garbage")) }
            #expect(garbage?.code == "unsupportedFormat")
            let cut = await loadError { try await fixture.manager.loadImage(with: server.url("/cut.jpg")) }
            #expect(cut?.code == "truncatedData")
            #expect(await loadError { try await fixture.manager.loadImage(with: URL(string: "ftp://example.com/a.png")!) }?.code == "invalidURL")
            // Nothing half-made was cached.
            #expect(await fixture.cache.contains(key: server.url("/garbage").absoluteString) == .none)
            #expect(await fixture.cache.contains(key: server.url("/cut.jpg").absoluteString) == .none)
        }
    }

    @Test func cacheHelpersAndStore() async throws {
        try await withServer { server in
            let fixture = try ManagerFixture()
            let url = server.url("/stored.png")
            #expect(await !fixture.manager.cachedImageExists(for: url))
            let image = DecodedImage(bitmap: try SampleImages.gradient(width: 10, height: 10), format: .png, hasAlpha: false)
            await fixture.manager.store(image, for: url, toDisk: false)
            #expect(await fixture.manager.cachedImageExists(for: url))
            #expect(await !fixture.manager.diskImageExists(for: url))
            await fixture.manager.store(image, data: try SampleImages.encoded(.png, width: 10, height: 10), for: url)
            #expect(await fixture.manager.diskImageExists(for: url))
            let loaded = try await fixture.manager.loadImage(with: url)
            #expect(loaded.cacheType == .memory && loaded.image.width == 10)
            #expect(server.totalRequestCount == 0)
        }
    }

    @Test func cancelAllAndIsRunning() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            for index in 0..<3 { server.route("/slow\(index)", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate)) }
            let fixture = try ManagerFixture()
            let tasks = (0..<3).map { fixture.manager.imageTask(with: server.url("/slow\($0)")) }
            #expect(fixture.manager.isRunning)
            await server.waitForRequests(3)
            fixture.manager.cancelAll()
            for task in tasks {
                #expect(await loadError { try await task.result } == .cancelled)
            }
            #expect(!fixture.manager.isRunning)
            await server.waitForAborted(1, path: "/slow0")
            gate.open()
        }
    }
}
