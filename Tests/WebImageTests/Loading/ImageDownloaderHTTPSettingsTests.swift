import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The HTTP settings are declared once (`HTTPClientSettings`) and reach the HTTP stack from the
/// downloader's configuration however they are written: as an init argument, as the
/// configuration's own property (`configuration.maxRedirects`), or through `configuration.http`.
/// A setting that stopped reaching the loads would fail here (the init-argument routes are
/// covered by `maxBodySizeApplies`, `theDownloadersResourceTimeoutApplies`,
/// `theRedirectPolicySeesEveryHopAndCanRefuse` and the HTTP/2 tests' `httpVersion`).
@Suite("The downloader's HTTP settings reach the HTTP stack", .timeLimit(.minutes(1)))
struct ImageDownloaderHTTPSettingsTests {
    @Test func theLoaderAndTheDownloaderShareOneDeclaration() {
        var configuration = ImageDownloaderConfiguration(maxBodySize: 7)
        configuration.maxRedirects = 2
        let settings: HTTPClientSettings = configuration.http
        #expect(settings.maxBodySize == 7)
        #expect(settings.maxRedirects == 2)
        #expect(ServerTrust.self == ServerTrust.self)
        #expect(HTTPProxySettings.self == HTTPProxySettings.self)
        #expect(HTTPRetryPolicy.self == HTTPRetryPolicy.self)
        #expect(HTTPVersionPreference.self == HTTPVersionPreference.self)
    }

    @Test(arguments: LoopbackProtocol.allCases) func maxRedirectsStopsTheChain(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .redirect(to: "/b"))
            server.route("/b", .redirect(to: "/c"))
            server.route("/c", .image(testBytes(10), contentType: "image/png"))
            var configuration = ImageDownloaderConfiguration()
            configuration.maxRedirects = 1
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(configuration))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/a")))).error == .tooManyRedirects)
            #expect(server.requestCount(for: "/c") == 0)
            configuration.http.maxRedirects = 2
            let lenient = ImageDownloader(configuration: .speakingCurrentServer(configuration))
            #expect(await collect(lenient.load(ImageLoadRequest(url: server.url("/a")))).data?.count == 10)
            try await downloader.shutdown()
            try await lenient.shutdown()
        }
    }

    /// Loads' settings travel with each load: two downloaders on one pool keep their own limits.
    @Test(arguments: LoopbackProtocol.allCases) func downloadersOnOnePoolKeepTheirOwnLimits(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/big", .image(testBytes(10_000), contentType: "image/png"))
            var strict = ImageDownloaderConfiguration()
            strict.maxBodySize = 1_000
            let small = ImageDownloader(configuration: .speakingCurrentServer(strict))
            let large = ImageDownloader(configuration: .speakingCurrentServer(ImageDownloaderConfiguration()))
            let refused = await collect(small.load(ImageLoadRequest(url: server.url("/big"))))
            guard case .tooLarge = refused.error else {
                Issue.record("expected tooLarge, got \(String(describing: refused.error))")
                return
            }
            #expect(await collect(large.load(ImageLoadRequest(url: server.url("/big")))).data?.count == 10_000)
            try await small.shutdown()
            try await large.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theRedirectPolicySetAfterInitVetoes(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .redirect(to: "/b"))
            server.route("/b", .image(testBytes(10), contentType: "image/png"))
            var configuration = ImageDownloaderConfiguration()
            configuration.redirectPolicy = { _, to in to.path != "/b" }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(configuration))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a"))))
            guard case .rejected = outcome.error else {
                Issue.record("expected rejected, got \(String(describing: outcome.error))")
                return
            }
            #expect(server.requestCount(for: "/b") == 0)
            try await downloader.shutdown()
        }
    }

    /// The connect timeout was the loader's alone; the downloader's configuration reaches it now.
    @Test func theDownloadersConnectTimeoutCoversTheTLSHandshake() async throws {
        try await withSilentListener { listener in
            var configuration = ImageDownloaderConfiguration(timeout: .seconds(30))
            configuration.connectTimeout = .milliseconds(300)
            let downloader = ImageDownloader(configuration: configuration)
            let start = ContinuousClock.now
            let outcome = await finishing(within: .seconds(10)) {
                await collect(downloader.load(ImageLoadRequest(url: listener.url("/a.jpg"))))
            }
            #expect(outcome?.error == .timedOut)
            #expect(ContinuousClock.now - start < .seconds(8))
            try await downloader.shutdown()
        }
    }
}
