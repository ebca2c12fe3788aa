import Foundation
import Testing
import WebImage
import WebImageTestSupport

@Suite("HTTPImageLoader against the loopback server", .timeLimit(.minutes(1)))
struct HTTPImageLoaderTests {
    @Test(arguments: LoopbackProtocol.allCases) func plainBodyCompletesWithProgressAndHeaders(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(200_000)
            server.route("/a.png", .image(body, contentType: "image/png"))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a.png"))))
                #expect(outcome.error == nil)
                #expect(outcome.data == body)
                #expect(outcome.progressCount >= 1)
                #expect(outcome.responses.first?.mimeType == "image/png")
                #expect(outcome.responses.first?.expectedContentLength == 200_000)
                #expect(outcome.partialCount == 0)
            }
            let headers = try #require(server.requests.first).headers
            #expect(headers["accept"] == "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8")
            #expect(headers["user-agent"] == "swift-webimage/0.1")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func partialDataWhenRequested(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/p", LoopbackResponse(body: .bytes(testBytes(40_000)), drip: (chunkSize: 10_000, interval: .milliseconds(5))))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/p"), wantsPartialData: true)))
                #expect(outcome.data?.count == 40_000)
                #expect(outcome.partialCount >= 2)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func chunkedBodyWithoutLength(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(150_000)
            server.route("/c", LoopbackResponse(body: .bytes(body), sendsContentLength: false))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/c"))))
                #expect(outcome.data == body)
                #expect(outcome.responses.first?.expectedContentLength == nil)
                // HTTP/2 has no chunked coding: a body without a length simply ends with its stream.
                #expect(outcome.responses.first?.headers["transfer-encoding"] == (http.isHTTP2 ? nil : "chunked"))
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func delayedHeadTimesOut(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/slow-head", LoopbackResponse(body: .bytes(testBytes(10)), delayBeforeHead: .seconds(30)))
            try await withHTTPLoader { loader in
                let start = ContinuousClock.now
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/slow-head"), timeout: .milliseconds(300))))
                #expect(outcome.error == .timedOut)
                #expect(ContinuousClock.now - start < .seconds(5))
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func stalledBodyTimesOut(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/stall", LoopbackResponse(body: .bytes(testBytes(10_000)), gate: gate, gatePoint: .afterBodyBytes(1_000)))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/stall"), timeout: .seconds(1))))
                #expect(outcome.error == .timedOut)
                #expect(outcome.error?.isTransient == true)
                #expect(outcome.progressCount >= 1)
            }
            // Bounded: a load that failed before its request reached the server must fail the test, not hang it.
            let aborted = await finishing(within: .seconds(10)) { await server.waitForAborted(1, path: "/stall") }
            #expect(aborted != nil, "the server never saw the stalled response aborted")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func slowDripThatKeepsMovingIsNotKilled(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            // 24 chunks 100 ms apart: 2.4 s in all, more than twice the 1 s idle timeout, while
            // each gap is a tenth of it (a wide margin, since the whole suite runs in parallel on 2 cores).
            server.route("/drip", LoopbackResponse(body: .bytes(testBytes(24_000)), drip: (chunkSize: 1_000, interval: .milliseconds(100))))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/drip"), timeout: .seconds(1))))
                #expect(outcome.error == nil)
                #expect(outcome.data?.count == 24_000)
                #expect(outcome.progressCount >= 10)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func resetMidBodyIsTransientConnectionFailure(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/reset", LoopbackResponse(body: .bytes(testBytes(100_000)), resetAfterBytes: 5_000))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/reset"))))
                guard case .connectionFailed = outcome.error else {
                    Issue.record("expected connectionFailed, got \(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                    return
                }
                #expect(outcome.error?.isTransient == true)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func truncatedBodyIsTruncatedData(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/short", LoopbackResponse(body: .bytes(testBytes(5_000)), announcedLength: 10_000))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/short"))))
                guard case .truncatedData = outcome.error else {
                    Issue.record("expected truncatedData, got \(String(describing: outcome.error))")
                    return
                }
            }
        }
    }

    @Test(arguments: [404, 403, 500, 503])
    func nonSuccessStatusIsHTTPStatus(code: Int) async throws {
        try await withServer { server in
            server.route("/s", LoopbackResponse(status: code, body: .bytes(Data("nope".utf8))))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/s"))))
                #expect(outcome.error == .httpStatus(code))
                #expect(outcome.error?.isTransient == (code >= 500))
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func unknownPathIs404(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/missing"))))
                #expect(outcome.error == .httpStatus(404))
                #expect(outcome.error?.isTransient == false)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func emptyBodyIsEmptyData(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/empty", .status(200))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/empty"))))
                #expect(outcome.error == .emptyData)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func hugeBodyWithLengthIsRejectedUpFront(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/huge", LoopbackResponse(body: .generated(count: 4 << 30)))
            try await withHTTPLoader(.init(maxBodySize: 1 << 20)) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/huge"))))
                guard case .tooLarge = outcome.error else {
                    Issue.record("expected tooLarge, got \(String(describing: outcome.error))")
                    return
                }
                #expect(outcome.progressCount == 0)
            }
            await server.waitForAborted(1, path: "/huge")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func hugeChunkedBodyIsCutWhileStreaming(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/huge", LoopbackResponse(body: .generated(count: 4 << 30), sendsContentLength: false))
            try await withHTTPLoader(.init(maxBodySize: 1 << 20)) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/huge"))))
                guard case .tooLarge = outcome.error else {
                    Issue.record("expected tooLarge, got \(String(describing: outcome.error))")
                    return
                }
            }
            // The server never finished its 4 GB: the client hung up after about 1 MB.
            await server.waitForAborted(1, path: "/huge")
            #expect(server.completedCount(for: "/huge") == 0)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func notModifiedWithETag(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/e", LoopbackResponse(body: .bytes(testBytes(100)), etag: "\"v1\""))
            try await withHTTPLoader { loader in
                let first = await collect(loader.load(ImageLoadRequest(url: server.url("/e"))))
                let validators = try #require(first.completedResponse?.validators)
                #expect(validators.etag == "\"v1\"")
                let second = await collect(loader.load(ImageLoadRequest(url: server.url("/e"), validators: validators)))
                #expect(second.error == nil)
                #expect(second.notModified?.statusCode == 304)
                #expect(second.data == nil)
            }
            #expect(server.requests.last?.headers["if-none-match"] == "\"v1\"")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func notModifiedWithLastModified(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let date = "Wed, 21 Oct 2015 07:28:00 GMT"
            server.route("/m", LoopbackResponse(body: .bytes(testBytes(100)), lastModified: date))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/m"), validators: HTTPLoadRequest.Validators(lastModified: date))))
                #expect(outcome.notModified != nil)
                let changed = await collect(loader.load(ImageLoadRequest(url: server.url("/m"), validators: HTTPLoadRequest.Validators(lastModified: "Thu, 01 Jan 1970 00:00:00 GMT"))))
                #expect(changed.data?.count == 100)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func redirectChainIsFollowed(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/r1", .redirect(to: "/r2", status: 301))
            server.route("/r2", .redirect(to: "/r3", status: 302))
            server.route("/r3", .redirect(to: server.url("/final").absoluteString, status: 307))
            server.route("/final", .image(testBytes(1_000), contentType: "image/jpeg"))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/r1"))))
                #expect(outcome.data?.count == 1_000)
                #expect(outcome.completedResponse?.url.path == "/final")
            }
            #expect(server.requests.map(\.path) == ["/r1", "/r2", "/r3", "/final"])
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func redirectLoopIsTooManyRedirects(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/x", .redirect(to: "/y"))
            server.route("/y", .redirect(to: "/x"))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/x"))))
                #expect(outcome.error == .tooManyRedirects)
            }
            #expect(server.totalRequestCount <= 6)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func longRedirectChainStopsAtFive(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            for step in 0..<8 { server.route("/hop\(step)", .redirect(to: "/hop\(step + 1)")) }
            server.route("/hop8", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/hop0"))))
                #expect(outcome.error == .tooManyRedirects)
            }
            #expect(server.totalRequestCount == 6)
        }
    }

    @Test func connectionRefusedIsTransient() async throws {
        let server = try await LoopbackServer.start()
        let url = server.url("/gone")
        try await server.shutdown()
        try await withHTTPLoader { loader in
            let outcome = await collect(loader.load(ImageLoadRequest(url: url)))
            guard case .connectionFailed = outcome.error else {
                Issue.record("expected connectionFailed, got \(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                return
            }
            #expect(outcome.error?.isTransient == true)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func cancellingTheStreamClosesTheConnection(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/hold", LoopbackResponse(body: .bytes(testBytes(10_000)), gate: gate, gatePoint: .afterBodyBytes(100)))
            try await withHTTPLoader { loader in
                let task = Task {
                    await collect(loader.load(ImageLoadRequest(url: server.url("/hold"))))
                }
                await server.waitForRequests(1, path: "/hold")
                task.cancel()
                let outcome = await task.value
                #expect(outcome.data == nil)
                await server.waitForAborted(1, path: "/hold")
            }
        }
    }
}
