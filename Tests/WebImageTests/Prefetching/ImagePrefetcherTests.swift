import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

@Suite("ImagePrefetcher", .timeLimit(.minutes(1)))
struct ImagePrefetcherTests {
    @Test func prefetchesIntoTheCacheAndSummarizes() async throws {
        try await withServer { server in
            var sizes: Int64 = 0
            for index in 0..<4 {
                let jpeg = try sampleJPEG(seed: index)
                sizes += Int64(jpeg.count)
                server.route("/p\(index).jpg", .image(jpeg, contentType: "image/jpeg"))
            }
            let fixture = try ManagerFixture()
            let prefetcher = ImagePrefetcher(manager: fixture.manager)
            let urls = (0..<4).map { server.url("/p\($0).jpg") } + [server.url("/missing.jpg"), server.url("/p0.jpg")]
            let token = prefetcher.prefetch(urls)
            var last: PrefetchProgress?
            for await step in token.progress { last = step }
            let summary = await token.summary
            #expect(summary.progress.total == 5, "duplicates load once")
            #expect(summary.progress.finished == 4 && summary.progress.failed == 1)
            #expect(summary.progress.downloadedBytes == sizes)
            #expect(!summary.wasCancelled && summary.cacheHits == 0)
            #expect(last?.completed == 5 && last?.fraction == 1)
            for index in 0..<4 { #expect(await fixture.manager.cachedImageExists(for: server.url("/p\(index).jpg"))) }
            let again = await prefetcher.prefetch(urls).summary
            #expect(again.cacheHits == 4 && again.progress.downloadedBytes == 0)
            #expect(prefetcher.runningPrefetchCount == 0)
        }
    }

    @Test func respectsItsConcurrencyLimit() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            for index in 0..<6 { server.route("/c\(index).jpg", LoopbackResponse(body: .bytes(try sampleJPEG(seed: index)), gate: gate)) }
            let fixture = try ManagerFixture()
            let prefetcher = ImagePrefetcher(manager: fixture.manager, configuration: .init(maxConcurrentPrefetches: 2))
            let token = prefetcher.prefetch((0..<6).map { server.url("/c\($0).jpg") })
            await server.waitForRequests(2)
            // Loads take a slot before they start, so the manager runs exactly two.
            #expect(fixture.manager.runningCount == 2)
            gate.open()
            let summary = await token.summary
            #expect(summary.progress.finished == 6)
            #expect(server.totalRequestCount == 6)
        }
    }

    @Test func prefetchesAtLowPriority() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/blocker.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate))
            server.route("/later.jpg", .image(try sampleJPEG(seed: 1), contentType: "image/jpeg"))
            server.route("/visible.jpg", .image(try sampleJPEG(seed: 2), contentType: "image/jpeg"))
            let fixture = try ManagerFixture(downloader: ImageDownloaderConfiguration(maxConcurrentDownloads: 1, timeout: .seconds(5)))
            let blocker = fixture.manager.imageTask(with: server.url("/blocker.jpg"))
            await server.waitForRequests(1)
            let token = ImagePrefetcher(manager: fixture.manager).prefetch([server.url("/later.jpg")])
            await waitUntil("the prefetch is queued") { fixture.downloader.queuedDownloadCount == 1 }
            let visible = fixture.manager.imageTask(with: server.url("/visible.jpg"))
            await waitUntil("the visible load is queued") { fixture.downloader.queuedDownloadCount == 2 }
            gate.open()
            _ = try await blocker.result
            _ = try await visible.result
            _ = await token.summary
            #expect(server.requests.map(\.path) == ["/blocker.jpg", "/visible.jpg", "/later.jpg"])
        }
    }

    @Test func cancelStopsThePrefetch() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            for index in 0..<4 { server.route("/x\(index).jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate)) }
            let fixture = try ManagerFixture()
            let prefetcher = ImagePrefetcher(manager: fixture.manager, configuration: .init(maxConcurrentPrefetches: 2))
            let token = prefetcher.prefetch((0..<4).map { server.url("/x\($0).jpg") })
            await server.waitForRequests(2)
            token.cancel()
            let summary = await token.summary
            #expect(summary.wasCancelled)
            #expect(summary.progress.finished == 0 && summary.progress.failed == 0)
            await server.waitForAborted(1, path: "/x0.jpg")
            gate.open()
            #expect(server.totalRequestCount == 2, "queued URLs never start")
            #expect(!fixture.manager.isRunning)
        }
    }

    @Test func policyCancelPrevious() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/old.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate))
            server.route("/new.jpg", .image(try sampleJPEG(seed: 3), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let prefetcher = ImagePrefetcher(manager: fixture.manager, configuration: .init(policy: .cancelPrevious))
            let first = prefetcher.prefetch([server.url("/old.jpg")])
            await server.waitForRequests(1)
            let second = prefetcher.prefetch([server.url("/new.jpg")])
            #expect(await first.summary.wasCancelled)
            #expect(await second.summary.progress.finished == 1)
            gate.open()
        }
    }

    @Test func policyQueueBehindPrevious() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/one.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate))
            server.route("/two.jpg", .image(try sampleJPEG(seed: 3), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let prefetcher = ImagePrefetcher(manager: fixture.manager, configuration: .init(policy: .queueBehindPrevious))
            let first = prefetcher.prefetch([server.url("/one.jpg")])
            await server.waitForRequests(1)
            let second = prefetcher.prefetch([server.url("/two.jpg")])
            #expect(prefetcher.runningPrefetchCount == 2)
            gate.open()
            #expect(await second.summary.progress.finished == 1)
            #expect(await first.summary.progress.finished == 1)
            #expect(server.requests.map(\.path) == ["/one.jpg", "/two.jpg"])
        }
    }

    @Test func completionHandlerForm() async throws {
        try await withServer { server in
            server.route("/h.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let steps = Counter()
            let summary: PrefetchSummary = await withCheckedContinuation { continuation in
                ImagePrefetcher(manager: fixture.manager).prefetch([server.url("/h.jpg")], progress: { _ in steps.increment() }) {
                    continuation.resume(returning: $0)
                }
            }
            #expect(summary.progress.finished == 1)
            #expect(steps.count >= 1)
        }
    }
}
