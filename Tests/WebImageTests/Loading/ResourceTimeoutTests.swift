import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The total deadline: a body that keeps trickling never trips the idle timeout, but the load
/// still ends at its resource timeout.
@Suite("Resource timeout", .timeLimit(.minutes(1)))
struct ResourceTimeoutTests {
    /// 10,000 bytes, one every 20 ms: 200 s to complete, never 20 ms silent.
    static let drip = LoopbackResponse(body: .bytes(testBytes(10_000)), drip: (chunkSize: 1, interval: .milliseconds(20)))

    @Test(arguments: LoopbackProtocol.allCases) func aRequestsResourceTimeoutEndsADrip(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/drip", Self.drip)
            try await withHTTPLoader(.init(idleTimeout: .seconds(30))) { loader in
                let start = ContinuousClock.now
                // 2 s, not less: with the whole timed group running (every loader test over HTTP/1.1,
                // h2 and h2c at once on 2 cores) 400 ms sometimes ran out before the request reached
                // the server, which then had no response to see aborted.
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/drip"), resourceTimeout: .seconds(2))))
                // Only the resource timer can end it this soon: the idle timeout is 30 s, the body takes 200 s.
                #expect(outcome.error == .timedOut)
                #expect(ContinuousClock.now - start < .seconds(10))
            }
            // Bounded: a load that ended before its request reached the server must fail the test, not hang it.
            let aborted = await finishing(within: .seconds(10)) { await server.waitForAborted(1, path: "/drip") }
            #expect(aborted != nil, "the server never saw the dripping response aborted")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theLoadersResourceTimeoutIsTheDefault(_ http: LoopbackProtocol) async throws {
        #expect(ImageLoaderDefaults.resourceTimeout == .seconds(60))
        #expect(HTTPClientSettings().resourceTimeout == .seconds(60))
        try await withServer(http) { server in
            server.route("/drip", Self.drip)
            try await withHTTPLoader(.init(idleTimeout: .seconds(30), resourceTimeout: .milliseconds(400))) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/drip"))))
                #expect(outcome.error == .timedOut)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theDownloadersResourceTimeoutApplies(_ http: LoopbackProtocol) async throws {
        #expect(ImageDownloaderConfiguration().resourceTimeout == .seconds(60))
        try await withServer(http) { server in
            server.route("/drip", Self.drip)
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(timeout: .seconds(30), resourceTimeout: .milliseconds(400))))
            let start = ContinuousClock.now
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/drip"))))
            #expect(outcome.error == .timedOut)
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(downloader.runningDownloadCount == 0)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theResourceTimeoutCoversRedirectsAndStillLetsFastLoadsThrough(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/hop", .redirect(to: "/drip"))
            server.route("/drip", Self.drip)
            server.route("/fast", .image(testBytes(100), contentType: "image/png"))
            // 1 s: ample for a 100-byte loopback load even on a busy machine.
            try await withHTTPLoader(.init(idleTimeout: .seconds(30), resourceTimeout: .seconds(1))) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/hop")))).error == .timedOut)
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/fast")))).data?.count == 100)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aNonPositiveResourceTimeoutIsAnInvalidRequest(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"), resourceTimeout: .seconds(-5))))
                guard case .invalidRequest = outcome.error else {
                    Issue.record("expected invalidRequest, got \(String(describing: outcome.error))")
                    return
                }
            }
            #expect(server.totalRequestCount == 0)
        }
    }
}
