import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The downloader's connection settings and counters, observed at the loopback server: the
/// per-host limit, idle expiry, and per-origin metrics.
@Suite("Connection hygiene", .timeLimit(.minutes(1)))
struct ConnectionHygieneTests {
    /// The limit has one home, `HTTPClientSettings.maxConnectionsPerHost`: set as the
    /// configuration's own property or through `configuration.http`, it is the same setting
    /// (through `http` it used to be ignored by the downloader).
    @Test(arguments: LoopbackProtocol.allCases, [false, true])
    func theDownloaderKeepsToItsPerHostLimitAndCountsConnections(_ http: LoopbackProtocol, throughHTTPSettings: Bool) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/slow.png", LoopbackResponse(body: .bytes(testBytes(1_000)), gate: gate))
            var configuration = ImageDownloaderConfiguration(maxConcurrentDownloads: 6)
            if throughHTTPSettings {
                configuration.http.maxConnectionsPerHost = 2
            } else {
                configuration.maxConnectionsPerHost = 2
            }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(configuration))
            let loads = (0..<6).map { downloader.load(ImageLoadRequest(url: server.url("/slow.png?n=\($0)"))) }
            // Two requests reach the server; the other four wait for one of its two connections.
            await server.waitForRequests(2, path: "/slow.png")
            gate.open()
            for load in loads {
                let outcome = await collect(load)
                #expect(outcome.data?.count == 1_000, "\(String(describing: outcome.error))")
            }
            #expect(server.requestCount(for: "/slow.png") == 6)
            let metrics = downloader.connectionMetrics()
            if http.isHTTP2 {
                // One connection carries all six as streams (the limit counts connections).
                #expect(Set(server.requests.map(\.connection)).count == 1)
                #expect(metrics == [server.origin: .init(connectionsOpened: 1, connectionsReused: 5, requests: 6, streamsOpened: 6)])
            } else {
                #expect(Set(server.requests.map(\.connection)).count == 2)
                #expect(metrics == [server.origin: .init(connectionsOpened: 2, connectionsReused: 4, requests: 6)])
            }
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func idleConnectionsAreClosedAfterTheSetting(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            var configuration = ImageDownloaderConfiguration()
            configuration.idleConnectionTimeout = .milliseconds(300)
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(configuration))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.png"))))
            #expect(outcome.data?.count == 10)
            // The pool closes its idle connection; the server sees it go (60 s by default).
            let closed = await finishing(within: .seconds(10)) {
                await server.waitForOpenConnections(0)
                return true
            }
            #expect(closed == true, "the idle connection was still open after 10 s")
            // A later load opens a new connection.
            _ = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.png?again"))))
            #expect(downloader.connectionMetrics().values.first?.connectionsOpened == 2)
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func theLoaderCountsReuseByOrigin(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader { loader in
                for _ in 0..<3 { _ = await collect(loader.load(ImageLoadRequest(url: server.url("/a.png")))) }
                #expect(loader.connectionMetrics() == [server.origin: .init(connectionsOpened: 1, connectionsReused: 2, requests: 3,
                                                                             streamsOpened: http.isHTTP2 ? 3 : 0)])
            }
        }
    }
}
