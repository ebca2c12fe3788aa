import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Loads through a real HTTP proxy (tinyproxy): plain http forwarded, https tunnelled with
/// CONNECT, NO_PROXY bypassing it, a 407 typed and permanent, the address policy applied to the
/// server's name before anything reaches the proxy.
@Suite("Through a real HTTP proxy", .enabled(if: TinyProxy.isAvailable, "tinyproxy is not installed (scripts/install-deps.sh installs it)"),
       .serialized, .timeLimit(.minutes(1)))
struct ProxyTests {
    private func makeLoader(_ proxy: HTTPProxySettings, trusting pem: String? = nil,
                            httpVersion: HTTPVersionPreference = .http1_1) -> HTTPImageLoader {
        var configuration = HTTPClientSettings(idleTimeout: .seconds(10), trustedCertificatesPEM: pem.map { [$0] } ?? [], proxy: proxy)
        configuration.httpVersion = httpVersion
        return HTTPImageLoader(configuration: configuration)
    }

    @Test func aPlainHTTPLoadIsForwardedByTheProxy() async throws {
        try await withServer { origin in
            let jpeg = try sampleJPEG()
            origin.route("/a.jpg", .image(jpeg, contentType: "image/jpeg"))
            try await withTinyProxy { proxy in
                let loader = makeLoader(.init(proxy: proxy.url()))
                let outcome = await collect(loader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(outcome.error == nil, "\(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                #expect(outcome.data == jpeg)
                // tinyproxy says so on the request it forwarded, and logs the absolute-form target it got.
                #expect(origin.requests.first?.headers["via"]?.contains("tinyproxy") == true, "\(origin.requests)")
                #expect(await proxy.waitForLog("GET \(origin.url("/a.jpg").absoluteString) HTTP/1.1"))
                try await loader.shutdown()
            }
        }
    }

    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
    func anHTTPSLoadIsTunnelledWithCONNECT() async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls) { origin in
            let jpeg = try sampleJPEG()
            origin.route("/a.jpg", .image(jpeg, contentType: "image/jpeg"))
            try await withTinyProxy(connectPorts: [origin.port]) { proxy in
                let loader = makeLoader(.init(proxy: proxy.url()), trusting: tls.certificatePEM)
                let outcome = await collect(loader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(outcome.error == nil, "\(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                #expect(outcome.data == jpeg)
                #expect(await proxy.waitForLog("CONNECT 127.0.0.1:\(origin.port) HTTP/1.1"))
                // End-to-end TLS: the origin saw the request, without the proxy's Via (the tunnel is opaque to it).
                #expect(origin.requestCount(for: "/a.jpg") == 1)
                #expect(origin.requests.first?.headers["via"] == nil)
                try await loader.shutdown()
            }
        }
    }

    /// HTTP/2 goes through the tunnel: TLS, and so ALPN, runs end to end with the origin.
    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
    func http2IsSpokenThroughACONNECTTunnel() async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withShutdown(of: try await LoopbackServer.start(tls: tls, http2: true), { try await $0.shutdown() }) { origin in
            let jpeg = try sampleJPEG()
            origin.route("/a.jpg", .image(jpeg, contentType: "image/jpeg"))
            try await withTinyProxy(connectPorts: [origin.port]) { proxy in
                let loader = makeLoader(.init(proxy: proxy.url()), trusting: tls.certificatePEM, httpVersion: .auto)
                for _ in 0..<3 {
                    let outcome = await collect(loader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                    #expect(outcome.error == nil, "\(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                    #expect(outcome.data == jpeg)
                }
                #expect(await proxy.waitForLog("CONNECT 127.0.0.1:\(origin.port) HTTP/1.1"))
                #expect(origin.requests.map(\.version) == ["HTTP/2.0", "HTTP/2.0", "HTTP/2.0"])
                #expect(origin.acceptedConnectionCount == 1)
                try await loader.shutdown()
            }
        }
    }

    @Test func noProxyHostsGoDirect() async throws {
        try await withServer { origin in
            origin.route("/a.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            try await withTinyProxy { proxy in
                for noProxy in ["127.0.0.1", "example.com, 127.0.0.1:\(origin.port)", "*", "127.0.0.0/8"] {
                    let loader = makeLoader(.init(proxy: proxy.url(), noProxy: noProxy))
                    let before = origin.totalRequestCount
                    let outcome = await collect(loader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                    #expect(outcome.error == nil, "\(noProxy): \(String(describing: outcome.error))")
                    #expect(origin.totalRequestCount == before + 1)
                    #expect(origin.requests.last?.headers["via"] == nil, "NO_PROXY=\(noProxy) went through the proxy")
                    try await loader.shutdown()
                }
                // Another port of the listed host is not bypassed.
                let loader = makeLoader(.init(proxy: proxy.url(), noProxy: "127.0.0.1:1"))
                _ = await collect(loader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(origin.requests.last?.headers["via"]?.contains("tinyproxy") == true)
                try await loader.shutdown()
            }
        }
    }

    @Test func theEnvironmentIsReadByDefault() async throws {
        try await withServer { origin in
            origin.route("/a.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            try await withTinyProxy { proxy in
                let settings = HTTPProxySettings.environment(["HTTP_PROXY": "127.0.0.1:\(proxy.port)", "https_proxy": ""])
                #expect(settings.httpProxy == "127.0.0.1:\(proxy.port)")
                #expect(settings.httpsProxy == nil)
                let downloader = ImageDownloader(configuration: .init(timeout: .seconds(10), proxy: settings))
                let outcome = await collect(downloader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(outcome.error == nil, "\(String(describing: outcome.error))")
                #expect(origin.requests.last?.headers["via"]?.contains("tinyproxy") == true)
                try await downloader.shutdown()
            }
        }
    }

    @Test func a407IsTypedAndPermanent() async throws {
        try await withServer { origin in
            let jpeg = try sampleJPEG()
            origin.route("/a.jpg", .image(jpeg, contentType: "image/jpeg"))
            try await withTinyProxy(basicAuth: (user: "alice", password: "s3cret")) { proxy in
                let anonymous = makeLoader(.init(proxy: proxy.url()))
                let refused = await collect(anonymous.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                guard case .proxyAuthenticationRequired(let name)? = refused.error else {
                    Issue.record("expected proxyAuthenticationRequired, got \(String(describing: refused.error)) \(refused.otherError ?? "")")
                    return
                }
                #expect(name == "127.0.0.1:\(proxy.port)")
                #expect(refused.error?.isTransient == false)
                #expect(refused.error?.code == "proxyAuthenticationRequired")
                #expect(origin.totalRequestCount == 0)
                try await anonymous.shutdown()

                // tinyproxy answers wrong credentials with 401, not 407 (curl sees the same): the
                // load fails with that status, and nothing reaches the server.
                let wrong = makeLoader(.init(proxy: proxy.url(user: "alice", password: "nope")))
                let refusedAgain = await collect(wrong.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(refusedAgain.error == .httpStatus(401) || refusedAgain.error?.code == "proxyAuthenticationRequired",
                        "\(String(describing: refusedAgain.error))")
                #expect(origin.totalRequestCount == 0)
                try await wrong.shutdown()

                let authorized = makeLoader(.init(proxy: proxy.url(user: "alice", password: "s3cret")))
                let outcome = await collect(authorized.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(outcome.data == jpeg, "\(String(describing: outcome.error))")
                // The proxy's credentials are for the proxy: tinyproxy does not pass them on.
                #expect(origin.requests.last?.headers["proxy-authorization"] == nil)
                try await authorized.shutdown()

                // The manager lists the URL as failed, as for any permanent failure.
                let fixture = try ManagerFixture(downloader: .init(timeout: .seconds(10), proxy: .init(proxy: proxy.url())))
                let url = origin.url("/a.jpg")
                await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(with: url) }
                #expect(fixture.manager.isFailedURL(url))
                try await fixture.downloader.shutdown()
            }
        }
    }

    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
    func a407ToCONNECTIsTyped() async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls) { origin in
            origin.route("/a.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            try await withTinyProxy(connectPorts: [origin.port], basicAuth: (user: "alice", password: "s3cret")) { proxy in
                let anonymous = makeLoader(.init(proxy: proxy.url()), trusting: tls.certificatePEM)
                let refused = await collect(anonymous.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(refused.error == .proxyAuthenticationRequired("127.0.0.1:\(proxy.port)"),
                        "\(String(describing: refused.error)) \(refused.otherError ?? "")")
                #expect(origin.totalRequestCount == 0)
                try await anonymous.shutdown()
                let authorized = makeLoader(.init(proxy: proxy.url(user: "alice", password: "s3cret")), trusting: tls.certificatePEM)
                let outcome = await collect(authorized.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(outcome.error == nil, "\(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                try await authorized.shutdown()
            }
        }
    }

    @Test func theAddressPolicyChecksTheServerNotTheProxy() async throws {
        try await withServer { origin in
            origin.route("/a.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            try await withTinyProxy { proxy in
                let asked = Locked([String]())
                let downloader = ImageDownloader(configuration: .init(timeout: .seconds(10), connectAddressPolicy: { host, port, _ in
                    asked.withLock { $0.append("\(host):\(port)") }
                    return false
                }, proxy: .init(proxy: proxy.url())))
                let outcome = await collect(downloader.load(ImageLoadRequest(url: URL(string: "http://localhost:\(origin.port)/a.jpg")!)))
                #expect(outcome.error?.code == "rejected", "\(String(describing: outcome.error))")
                // The server's name was put to the policy; nothing reached the server (nor, so, through the proxy).
                #expect(asked.withLock { $0 } == ["localhost:\(origin.port)"])
                #expect(origin.totalRequestCount == 0)
                try await downloader.shutdown()
            }
        }
    }

    @Test func anUnusableProxyFailsTheLoadRatherThanGoingDirect() async throws {
        try await withServer { origin in
            origin.route("/a.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            for proxy in ["socks5://127.0.0.1:1080", "http://", "https://127.0.0.1:3128"] {
                let loader = makeLoader(.init(proxy: proxy))
                let outcome = await collect(loader.load(ImageLoadRequest(url: origin.url("/a.jpg"))))
                #expect(outcome.error?.code == "invalidRequest", "\(proxy): \(String(describing: outcome.error))")
                try await loader.shutdown()
            }
            #expect(origin.totalRequestCount == 0)
        }
    }
}
