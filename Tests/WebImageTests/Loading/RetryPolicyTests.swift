import Foundation
import Testing
import WebImage
import WebImageHTTP
import WebImageTestSupport

/// The downloader's retry policy against the loopback server's faults (it counts requests):
/// transient failures only, `Retry-After` honoured, bytes a progressive caller got never taken
/// back (resumed with a range request when the server takes them).
@Suite("Retry policy", .timeLimit(.minutes(1)))
struct RetryPolicyTests {
    private static let quick = HTTPRetryPolicy(maxRetries: 2, baseDelay: .milliseconds(10), maxDelay: .seconds(5), jitter: 0)

    private func makeDownloader(_ policy: HTTPRetryPolicy? = quick, resourceTimeout: Duration = .seconds(30)) -> ImageDownloader {
        ImageDownloader(configuration: .speakingCurrentServer(.init(timeout: .seconds(10), resourceTimeout: resourceTimeout, proxy: .direct, retryPolicy: policy)))
    }

    @Test(arguments: LoopbackProtocol.allCases) func a503WithRetryAfterIsRetriedAfterTheWait(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let jpeg = try sampleJPEG()
            server.route("/a.jpg", sequence: [LoopbackResponse(status: 503, headers: ["Retry-After": "1"]),
                                              .image(jpeg, contentType: "image/jpeg")])
            let downloader = makeDownloader()
            let clock = ContinuousClock()
            let start = clock.now
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.jpg"))))
            let elapsed = clock.now - start
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.data == jpeg)
            #expect(server.requestCount(for: "/a.jpg") == 2)
            // The server asked for a second: the policy's own 10 ms wait gave way to it.
            #expect(elapsed >= .seconds(1), "retried after \(elapsed)")
            try await downloader.shutdown()
        }
    }

    @Test(arguments: [404, 403, 400, 501])
    func aPermanentStatusIsNotRetried(_ status: Int) async throws {
        try await withServer { server in
            server.route("/a.jpg", sequence: [.status(status), .image(try sampleJPEG(), contentType: "image/jpeg")])
            let downloader = makeDownloader()
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.jpg"))))
            #expect(outcome.error == .httpStatus(status))
            #expect(server.requestCount(for: "/a.jpg") == 1)
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func byDefaultNothingIsRetried(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a.jpg", sequence: [.status(503), .image(try sampleJPEG(), contentType: "image/jpeg")])
            let downloader = makeDownloader(nil)
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.jpg"))))
            #expect(outcome.error == .httpStatus(503))
            #expect(server.requestCount(for: "/a.jpg") == 1)
            try await downloader.shutdown()
        }
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retriesStopAtTheLimit(_ status: Int) async throws {
        try await withServer { server in
            server.route("/a.jpg", .status(status))
            let downloader = makeDownloader()
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.jpg"))))
            #expect(outcome.error == .httpStatus(status))
            #expect(server.requestCount(for: "/a.jpg") == 3, "the first try and two retries")
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aBodyCutShortIsRestartedWhenNothingWasDelivered(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(100_000)
            var cut = LoopbackResponse.image(body, contentType: "image/jpeg")
            cut.resetAfterBytes = 30_000
            server.route("/a.jpg", sequence: [cut, .image(body, contentType: "image/jpeg")])
            let downloader = makeDownloader()
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.jpg"))))
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.data == body)
            #expect(server.requestCount(for: "/a.jpg") == 2)
            #expect(server.requests.last?.headers["range"] == nil, "no validator: restarted, not resumed")
            try await downloader.shutdown()
        }
    }

    /// The first response sends 20 000 bytes, waits for the test to see partial data, sends up to
    /// 40 000 and resets the connection.
    private func cutAfterPartialData(_ body: Data, gate: LoopbackGate, ranges: Bool) -> LoopbackResponse {
        var response = LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(body), resetAfterBytes: 40_000,
                                        gate: gate, gatePoint: .afterBodyBytes(20_000), etag: ranges ? "\"v1\"" : nil)
        response.acceptsRanges = ranges
        return response
    }

    /// Loads `url` with partial data, opening `gate` once some arrived; the outcome and the partial data count.
    private func progressiveLoad(_ downloader: ImageDownloader, _ url: URL, opening gate: LoopbackGate) async -> (LoadOutcome, [Int]) {
        var outcome = LoadOutcome()
        var partialSizes: [Int] = []
        do {
            for try await event in downloader.load(ImageLoadRequest(url: url, wantsPartialData: true)) {
                switch event {
                case .partialData(let data):
                    partialSizes.append(data.count)
                    gate.open()
                case .completed(let data, let response):
                    outcome.data = data
                    outcome.completedResponse = response
                default:
                    break
                }
            }
        } catch let error as WebImageError {
            outcome.error = error
        } catch {
            outcome.otherError = "\(error)"
        }
        return (outcome, partialSizes)
    }

    @Test(arguments: LoopbackProtocol.allCases) func aBodyCutAfterPartialDataIsNotRetriedWithoutRanges(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(100_000)
            let gate = LoopbackGate()
            server.route("/a.jpg", sequence: [cutAfterPartialData(body, gate: gate, ranges: false), .image(body, contentType: "image/jpeg")])
            let downloader = makeDownloader()
            let (outcome, partials) = await progressiveLoad(downloader, server.url("/a.jpg"), opening: gate)
            #expect(!partials.isEmpty)
            #expect(outcome.data == nil)
            #expect(outcome.error != nil, "\(outcome.otherError ?? "")")
            // A restart would hand the caller the body's start again after it decoded past it.
            #expect(server.requestCount(for: "/a.jpg") == 1)
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aBodyCutAfterPartialDataIsResumedWithRanges(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(100_000)
            let gate = LoopbackGate()
            var rest = LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(body), etag: "\"v1\"")
            rest.acceptsRanges = true
            server.route("/a.jpg", sequence: [cutAfterPartialData(body, gate: gate, ranges: true), rest])
            let downloader = makeDownloader()
            let (outcome, partials) = await progressiveLoad(downloader, server.url("/a.jpg"), opening: gate)
            #expect(outcome.error == nil, "\(String(describing: outcome.error)) \(outcome.otherError ?? "")")
            #expect(outcome.data == body, "the resumed body is byte for byte the whole")
            #expect(outcome.completedResponse?.statusCode == 200)
            #expect(server.requestCount(for: "/a.jpg") == 2)
            let resumed = try #require(server.requests.last)
            let range = try #require(resumed.headers["range"])
            let start = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(range == "bytes=\(start)-" && start >= 20_000 && start <= 40_000, "\(range)")
            #expect(resumed.headers["if-range"] == "\"v1\"")
            // Partial data only grew: nothing already delivered was sent again from the start.
            #expect(partials == partials.sorted())
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aResumeAnsweredWithTheWholeBodyFails(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(100_000)
            let gate = LoopbackGate()
            // The representation changed: If-Range no longer matches, the server sends all of it.
            var changed = LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(testBytes(100_000, seed: 9)), etag: "\"v2\"")
            changed.acceptsRanges = true
            server.route("/a.jpg", sequence: [cutAfterPartialData(body, gate: gate, ranges: true), changed])
            let downloader = makeDownloader()
            let (outcome, _) = await progressiveLoad(downloader, server.url("/a.jpg"), opening: gate)
            #expect(outcome.data == nil)
            #expect(outcome.error != nil)
            #expect(server.requestCount(for: "/a.jpg") == 2, "the refused resume is not restarted")
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aWaitPastTheResourceTimeoutFailsAtOnce(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a.jpg", LoopbackResponse(status: 503, headers: ["Retry-After": "30"]))
            let downloader = makeDownloader(.init(maxRetries: 2, maxDelay: .seconds(60)), resourceTimeout: .seconds(20))
            let clock = ContinuousClock()
            let start = clock.now
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.jpg"))))
            #expect(outcome.error == .httpStatus(503))
            #expect(server.requestCount(for: "/a.jpg") == 1)
            #expect(clock.now - start < .seconds(15), "it waited for a retry it could not make")
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func cancellingDuringTheWaitEndsTheDownload(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a.jpg", LoopbackResponse(status: 503, headers: ["Retry-After": "30"]))
            // A resource timeout past the wait, so the retry does wait (else the 503 ends the load at once).
            let downloader = makeDownloader(.init(maxRetries: 2, maxDelay: .seconds(60)), resourceTimeout: .seconds(120))
            let token = downloader.download(ImageLoadRequest(url: server.url("/a.jpg")))
            await server.waitForRequests(1, path: "/a.jpg")
            token.cancel()
            let ended = await finishing(within: .seconds(10)) { await collect(token.events) }
            #expect(ended?.error == .cancelled, "\(String(describing: ended))")
            #expect(server.requestCount(for: "/a.jpg") == 1)
            try await downloader.shutdown()
        }
    }

    @Test func waitsBackOffExponentiallyWithinTheCap() {
        let policy = HTTPRetryPolicy(maxRetries: 9, baseDelay: .seconds(1), maxDelay: .seconds(10), jitter: 0.5, random: { 0.5 })
        #expect(policy.delay(beforeRetry: 1, retryAfter: nil) == .milliseconds(750))
        #expect(policy.delay(beforeRetry: 2, retryAfter: nil) == .milliseconds(1500))
        #expect(policy.delay(beforeRetry: 3, retryAfter: nil) == .seconds(3))
        #expect(policy.delay(beforeRetry: 9, retryAfter: nil) == .milliseconds(7500))
        #expect(policy.delay(beforeRetry: Int.max, retryAfter: nil) == .milliseconds(7500))
        #expect(policy.delay(beforeRetry: 1, retryAfter: .seconds(4)) == .seconds(4))
        #expect(policy.delay(beforeRetry: 1, retryAfter: .seconds(400)) == .seconds(10))
        let full = HTTPRetryPolicy(maxRetries: 1, baseDelay: .seconds(1), maxDelay: .seconds(10), jitter: 1, random: { 0.999 })
        #expect(full.delay(beforeRetry: 1, retryAfter: nil) <= .milliseconds(2))
    }

    @Test func retryAfterIsReadInSecondsAndAsAnHTTPDate() {
        // RFC 9110's example date is 784111777 seconds after 1970.
        let now = Date(timeIntervalSince1970: 784_111_777 - 5)
        #expect(HTTPRetryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(5))
        #expect(HTTPRetryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: Date(timeIntervalSince1970: 784_111_777 + 60)) == .zero)
        #expect(HTTPRetryPolicy.retryAfter("120") == .seconds(120))
        #expect(HTTPRetryPolicy.retryAfter(" 3 ") == .seconds(3))
        #expect(HTTPRetryPolicy.retryAfter("99999999999999999999999") != nil)
        for bad in ["", "-1", "1.5", "soon", "Sun, 06 Nov 1994 08:49:37 PST", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 36 Nov 1994 08:49:37 GMT"] {
            #expect(HTTPRetryPolicy.retryAfter(bad) == nil, "\(bad)")
        }
    }

    @Test func onlyTransientErrorsAreRetried() {
        #expect(HTTPRetryPolicy.retries(.connectionFailed("reset")))
        #expect(HTTPRetryPolicy.retries(.timedOut))
        #expect(HTTPRetryPolicy.retries(.truncatedData("cut")))
        for error: HTTPLoadError in [.untrustedCertificate("x"), .cancelled, .httpStatus(404), .httpStatus(501), .rejected("x"),
                                     .tooLarge("x"), .proxyAuthenticationRequired("p:1"), .invalidRequest("x"), .tooManyRedirects] {
            #expect(!HTTPRetryPolicy.retries(error), "\(error)")
        }
    }
}
