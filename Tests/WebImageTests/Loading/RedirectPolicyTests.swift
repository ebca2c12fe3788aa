import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Redirects may not downgrade https to http, carry the caller's headers to another origin, or
/// go anywhere the downloader's redirect policy refuses.
@Suite("Redirect policy", .timeLimit(.minutes(1)))
struct RedirectPolicyTests {
    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"), arguments: [false, true])
    func httpsToHTTPIsRefusedByDefault(http2: Bool) async throws {
        try await withHTTPSRedirectingToHTTP(http2: http2) { secure, plain in
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), allowsInvalidCertificates: true)) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: secure.url("/a.png"))))
                #expect(outcome.error?.code == "insecureRedirect", "\(String(describing: outcome.error))")
                #expect(outcome.error?.isTransient == false)
                #expect(outcome.data == nil)
            }
            #expect(secure.requestCount(for: "/a.png") == 1)
            #expect(plain.totalRequestCount == 0, "the downgraded URL was requested")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aCrossOriginHopKeepsOnlyTheDefaultHeaders(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { origin in
            try await withServer(http) { other in
                origin.route("/img", .redirect(to: other.url("/img").absoluteString))
                other.route("/img", .image(testBytes(10), contentType: "image/png"))
                let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(headers: ["User-Agent": "ua", "X-Default": "d"])))
                let request = ImageLoadRequest(url: origin.url("/img"),
                                               headers: ["X-Api-Key": "secret", "If-Match": "\"x\"", "Accept-Language": "fr"],
                                               validators: HTTPLoadRequest.Validators(etag: "\"v1\"", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT"))
                let outcome = await collect(downloader.load(request))
                #expect(outcome.data?.count == 10)
                let first = try #require(origin.requests.first)
                #expect(first.headers["x-api-key"] == "secret")
                #expect(first.headers["if-none-match"] == "\"v1\"")
                let hop = try #require(other.requests.first)
                for name in ["x-api-key", "if-match", "accept-language", "if-none-match", "if-modified-since", "authorization", "cookie"] {
                    #expect(hop.headers[name] == nil, "\(name) went to another origin")
                }
                #expect(hop.headers["user-agent"] == "ua")
                #expect(hop.headers["x-default"] == "d")
            }
        }
    }
}

/// The opt-ins and the hook of the redirect policy.
@Suite("Redirect policy options", .timeLimit(.minutes(1)))
struct RedirectPolicyOptionTests {
    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"), arguments: [false, true])
    func insecureRedirectsCanBeAllowed(http2: Bool) async throws {
        try await withHTTPSRedirectingToHTTP(http2: http2) { secure, plain in
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), allowsInvalidCertificates: true,
                                           allowsInsecureRedirects: true)) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: secure.url("/a.png")))).data?.count == 10)
            }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(allowsInvalidCertificates: true, allowsInsecureRedirects: true)))
            #expect(await collect(downloader.load(ImageLoadRequest(url: secure.url("/a.png")))).data?.count == 10)
            try await downloader.shutdown()
            let strict = ImageDownloader(configuration: .speakingCurrentServer(.init(allowsInvalidCertificates: true)))
            #expect(await collect(strict.load(ImageLoadRequest(url: secure.url("/a.png")))).error?.code == "insecureRedirect")
            try await strict.shutdown()
            #expect(plain.requestCount(for: "/a.png") == 2)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theRedirectPolicySeesEveryHopAndCanRefuse(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { origin in
            try await withServer(http) { other in
                origin.route("/a", .redirect(to: "/b"))
                origin.route("/b", .redirect(to: other.url("/c").absoluteString))
                other.route("/c", .image(testBytes(10), contentType: "image/png"))
                let hops = Locked<[String]>([])
                let blockedPort = other.port
                let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(redirectPolicy: { from, to in
                    hops.withLock { $0.append("\(from.path)->\(to.path)") }
                    return to.port != blockedPort
                })))
                let outcome = await collect(downloader.load(ImageLoadRequest(url: origin.url("/a"))))
                guard case .rejected = outcome.error else {
                    Issue.record("expected rejected, got \(String(describing: outcome.error))")
                    return
                }
                #expect(hops.withLock { $0 } == ["/a->/b", "/b->/c"])
                #expect(other.totalRequestCount == 0, "the refused target was requested")

                let permissive = ImageDownloader(configuration: .speakingCurrentServer(.init(redirectPolicy: { _, _ in true })))
                #expect(await collect(permissive.load(ImageLoadRequest(url: origin.url("/a")))).data?.count == 10)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theLoadersRedirectPolicyApplies(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .redirect(to: "/b"))
            server.route("/b", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), redirectPolicy: { _, to in to.path != "/b" })) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).error?.code == "rejected")
            }
            #expect(server.requestCount(for: "/b") == 0)
        }
    }
}

/// Runs `body` with an HTTPS server (self-signed) whose `/a.png` redirects to the same path on a
/// plain HTTP server, which serves 10 bytes there.
/// `secure` (https; with `http2`, h2 by ALPN, which the loaders take) redirects `/a.png` to `plain`.
func withHTTPSRedirectingToHTTP(http2: Bool = false,
                                _ body: (_ secure: LoopbackServer, _ plain: LoopbackServer) async throws -> Void) async throws {
    try await withServer(tls: try #require(try LoopbackTLS.selfSigned()), http2: http2) { secure in
        try await withServer { plain in
            secure.route("/a.png", .redirect(to: plain.url("/a.png").absoluteString))
            plain.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            try await body(secure, plain)
        }
    }
}
