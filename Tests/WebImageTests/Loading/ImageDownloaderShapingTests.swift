import Foundation
import Testing
import WebImage
import WebImageTestSupport

@Suite("ImageDownloader request shaping", .timeLimit(.minutes(1)))
struct ImageDownloaderShapingTests {
    @Test(arguments: LoopbackProtocol.allCases) func requestModifierCanVeto(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/v", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(requestModifier: { _ in nil })))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/v"))))
            guard case .rejected = outcome.error else {
                Issue.record("expected rejected, got \(String(describing: outcome.error))")
                return
            }
            #expect(server.totalRequestCount == 0)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func requestModifiersChangeHeadersAndURL(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/moved", .image(testBytes(10), contentType: "image/png"))
            let target = server.url("/moved")
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(requestModifier: { request in
                var request = request
                request.headers["X-Downloader"] = "yes"
                return request
            })))
            let options = DownloadOptions(requestModifier: { request in
                var request = request
                request.url = target
                request.headers["X-Caller"] = "me"
                return request
            })
            let token = downloader.download(ImageLoadRequest(url: server.url("/original")), options: options)
            #expect(token.url == target)
            #expect(await collect(token.events).data?.count == 10)
            let logged = try #require(server.requests.first)
            #expect(logged.path == "/moved")
            #expect(logged.headers["x-downloader"] == "yes")
            #expect(logged.headers["x-caller"] == "me")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func responseModifierCanReject(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/r", .image(testBytes(10), contentType: "text/html"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(responseModifier: { response in
                response.mimeType?.hasPrefix("image/") == true
            })))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/r"))))
            guard case .rejected = outcome.error else {
                Issue.record("expected rejected, got \(String(describing: outcome.error))")
                return
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func perCallerResponseModifierRejectsOnlyThatCaller(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/shared", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let picky = downloader.download(ImageLoadRequest(url: server.url("/shared")),
                                            options: DownloadOptions(responseModifier: { _ in false }))
            let easy = downloader.download(ImageLoadRequest(url: server.url("/shared")))
            await server.waitForRequests(1)
            gate.open()
            let pickyOutcome = await collect(picky.events)
            guard case .rejected = pickyOutcome.error else {
                Issue.record("expected rejected, got \(String(describing: pickyOutcome.error))")
                return
            }
            #expect(await collect(easy.events).data?.count == 10)
            #expect(server.requestCount(for: "/shared") == 1)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func credentialsAreSentToTheirHost(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/private", .image(testBytes(10), contentType: "image/png"))
            let credential = HTTPCredential(user: "alice", password: "secret")
            // The loopback server speaks plain http: credentials go there only when opted in.
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(credentials: ["127.0.0.1": credential],
                                                                  allowsCredentialsOverHTTP: true)))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/private")))).data != nil)
            #expect(server.requests.first?.headers["authorization"] == "Basic YWxpY2U6c2VjcmV0")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func cookiesComeBackToTheSameOrigin(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/login", LoopbackResponse(headers: ["Set-Cookie": "session=abc; Path=/"], body: .bytes(testBytes(10))))
            server.route("/img", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            _ = await collect(downloader.load(ImageLoadRequest(url: server.url("/login"))))
            _ = await collect(downloader.load(ImageLoadRequest(url: server.url("/img"))))
            #expect(server.requests.last?.headers["cookie"] == "session=abc")

            let cookieless = ImageDownloader(configuration: .speakingCurrentServer(.init(cookiesEnabled: false)))
            _ = await collect(cookieless.load(ImageLoadRequest(url: server.url("/login"))))
            _ = await collect(cookieless.load(ImageLoadRequest(url: server.url("/img"))))
            #expect(server.requests.last?.headers["cookie"] == nil)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func crossOriginRedirectDropsCredentialsAndCookies(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { origin in
            try await withServer(http) { other in
                origin.route("/login", LoopbackResponse(headers: ["Set-Cookie": "session=abc"], body: .bytes(testBytes(10))))
                origin.route("/img", .redirect(to: other.url("/img").absoluteString))
                other.route("/img", .image(testBytes(10), contentType: "image/png"))
                let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(
                    credentials: ["127.0.0.1": HTTPCredential(user: "alice", password: "secret")])))
                _ = await collect(downloader.load(ImageLoadRequest(url: origin.url("/login"))))
                let outcome = await collect(downloader.load(ImageLoadRequest(
                    url: origin.url("/img"), headers: ["Authorization": "Bearer explicit", "Cookie": "explicit=1"])))
                #expect(outcome.data?.count == 10)
                let sent = try #require(origin.requests.last)
                #expect(sent.path == "/img")
                #expect(sent.headers["authorization"] != nil)
                #expect(sent.headers["cookie"] == "session=abc")
                let received = try #require(other.requests.first)
                #expect(received.headers["authorization"] == nil)
                #expect(received.headers["cookie"] == nil)
                #expect(received.headers["user-agent"] == "swift-webimage/0.1")
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func eventsReportTheLifecycle(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/ok", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let events = downloader.events()
            let url = server.url("/ok")
            _ = await collect(downloader.load(ImageLoadRequest(url: url)))
            var seen: [DownloaderEvent] = []
            for await event in events {
                seen.append(event)
                if case .finished = event { break }
            }
            #expect(seen == [.started(url), .responseReceived(url, statusCode: 200), .finished(url, bytes: 10)])

            _ = await collect(downloader.load(ImageLoadRequest(url: server.url("/nothing"))))
            #expect(await waitForEvent(events) { $0 == .failed(server.url("/nothing"), .httpStatus(404)) })
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func downloaderTimeoutApplies(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/stuck", LoopbackResponse(body: .bytes(testBytes(10)), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(timeout: .milliseconds(300))))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/stuck")))).error == .timedOut)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func maxBodySizeApplies(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/big", .image(testBytes(100_000), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(maxBodySize: 1_000)))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/big"))))
            guard case .tooLarge = outcome.error else {
                Issue.record("expected tooLarge, got \(String(describing: outcome.error))")
                return
            }
        }
    }

    @Test func unsupportedSchemeIsInvalidURL() async throws {
        let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
        let url = try #require(URL(string: "ftp://example.com/a.png"))
        #expect(!downloader.canLoad(url))
        #expect(await collect(downloader.load(ImageLoadRequest(url: url))).error == .invalidURL(url.absoluteString))
    }
}
