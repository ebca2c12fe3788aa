import Foundation
import Testing
import WebImage
import WebImageTestSupport

@Suite("ImageDownloader scheduling", .timeLimit(.minutes(1)))
struct ImageDownloaderSchedulingTests {
    /// Holds `/first` at a gate with one slot, queues `paths` (each with its priority), releases,
    /// and returns the order the server saw.
    private func arrivalOrder(order: DownloadExecutionOrder,
                              _ queued: [(path: String, priority: LoadPriority)],
                              whileQueued: (ImageDownloader, [String: DownloadToken]) -> Void = { _, _ in }) async throws -> [String] {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/first", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate))
            for (path, _) in queued { server.route(path, .image(testBytes(10), contentType: "image/png")) }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(maxConcurrentDownloads: 1, executionOrder: order)))
            let first = downloader.download(ImageLoadRequest(url: server.url("/first")))
            await server.waitForRequests(1, path: "/first")
            var tokens: [String: DownloadToken] = [:]
            var all = [first]
            for (path, priority) in queued {
                let token = downloader.download(ImageLoadRequest(url: server.url(path), priority: priority))
                tokens[path] = token
                all.append(token)
            }
            #expect(downloader.runningDownloadCount == 1)
            #expect(downloader.queuedDownloadCount == Set(queued.map(\.path)).count)
            whileQueued(downloader, tokens)
            gate.open()
            for token in all { _ = await collect(token.events) }
            return server.requests.map(\.path)
        }
    }

    @Test func fifoIsTheDefault() async throws {
        let order = try await arrivalOrder(order: .fifo, [("/a", .normal), ("/b", .normal), ("/c", .normal)])
        #expect(order == ["/first", "/a", "/b", "/c"])
    }

    @Test func lifoStartsTheNewestFirst() async throws {
        let order = try await arrivalOrder(order: .lifo, [("/a", .normal), ("/b", .normal), ("/c", .normal)])
        #expect(order == ["/first", "/c", "/b", "/a"])
    }

    @Test func higherPriorityJumpsTheQueue() async throws {
        let order = try await arrivalOrder(order: .fifo, [("/a", .low), ("/b", .normal), ("/c", .high), ("/d", .veryHigh)])
        #expect(order == ["/first", "/d", "/c", "/b", "/a"])
    }

    @Test func joiningWithHigherPriorityRaisesAQueuedDownload() async throws {
        let order = try await arrivalOrder(order: .fifo, [("/a", .normal), ("/b", .normal), ("/b", .high)])
        #expect(order == ["/first", "/b", "/a"])
    }

    @Test func tokenCanRaiseItsPriority() async throws {
        let order = try await arrivalOrder(order: .fifo, [("/a", .normal), ("/b", .normal), ("/c", .normal)]) { _, tokens in
            tokens["/c"]?.setPriority(.veryHigh)
        }
        #expect(order == ["/first", "/c", "/a", "/b"])
    }

    @Test(arguments: LoopbackProtocol.allCases) func concurrencyLimitIsHonoured(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            for index in 0..<5 { server.route("/g\(index)", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate)) }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(maxConcurrentDownloads: 2)))
            let tokens = (0..<5).map { downloader.download(ImageLoadRequest(url: server.url("/g\($0)"))) }
            await server.waitForRequests(2)
            #expect(downloader.runningDownloadCount == 2)
            #expect(downloader.queuedDownloadCount == 3)
            // Two run at once, so their arrival order is up to the network: compare as a set.
            #expect(Set(server.requests.map(\.path)) == ["/g0", "/g1"])
            gate.open()
            for token in tokens { #expect(await collect(token.events).data?.count == 10) }
            #expect(server.totalRequestCount == 5)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func suspendHoldsTheQueueAndResumeReleasesIt(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/s", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            downloader.suspend()
            #expect(downloader.isSuspended)
            let token = downloader.download(ImageLoadRequest(url: server.url("/s")))
            #expect(downloader.queuedDownloadCount == 1)
            #expect(downloader.runningDownloadCount == 0)
            #expect(server.totalRequestCount == 0)
            downloader.resume()
            #expect(await collect(token.events).data?.count == 10)
            #expect(server.requestCount(for: "/s") == 1)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func cancelAllEndsQueuedAndRunning(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/run", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate))
            server.route("/wait", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(maxConcurrentDownloads: 1)))
            let running = downloader.download(ImageLoadRequest(url: server.url("/run")))
            let queued = downloader.download(ImageLoadRequest(url: server.url("/wait")))
            await server.waitForRequests(1)
            downloader.cancelAll()
            #expect(await collect(running.events).error == .cancelled)
            #expect(await collect(queued.events).error == .cancelled)
            #expect(downloader.runningDownloadCount == 0)
            #expect(downloader.queuedDownloadCount == 0)
            gate.open()
            #expect(server.requestCount(for: "/wait") == 0)
        }
    }
}

@Suite("ImageDownloader queue edge cases", .timeLimit(.minutes(1)))
struct ImageDownloaderQueueEdgeTests {
    @Test(arguments: LoopbackProtocol.allCases) func cancelledQueuedDownloadNeverReachesTheServer(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/busy", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate))
            server.route("/later", .image(testBytes(10), contentType: "image/png"))
            server.route("/after", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(maxConcurrentDownloads: 1)))
            let busy = downloader.download(ImageLoadRequest(url: server.url("/busy")))
            await server.waitForRequests(1)
            let later = downloader.download(ImageLoadRequest(url: server.url("/later")))
            let after = downloader.download(ImageLoadRequest(url: server.url("/after")))
            later.cancel()
            #expect(await collect(later.events).error == .cancelled)
            #expect(downloader.queuedDownloadCount == 1)
            gate.open()
            #expect(await collect(busy.events).data != nil)
            #expect(await collect(after.events).data != nil)
            #expect(server.requests.map(\.path) == ["/busy", "/after"])
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func runningCallerCanChangePriority(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/p", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let token = downloader.download(ImageLoadRequest(url: server.url("/p"), priority: .low))
            await server.waitForRequests(1)
            token.setPriority(.veryHigh)
            gate.open()
            #expect(await collect(token.events).data?.count == 10)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func downloaderWithItsOwnClientShutsDown(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/tls-off", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(allowsInvalidCertificates: true)))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/tls-off")))).data?.count == 10)
            try await downloader.shutdown()
        }
    }
}
