import Foundation
import Testing
import WebImageHTTP
import WebImageSupport
import WebImageTestSupport

/// HTTP/2 as the HTTP stack speaks it, observed at the loopback server: one connection carrying
/// every load, streams reset on cancel, the server's stream limit, GOAWAY, ALPN's fallback to
/// HTTP/1.1, and bodies far larger than the protocol's default windows.
@Suite("HTTP/2", .timeLimit(.minutes(1)))
struct HTTP2Tests {
    static let http2: [LoopbackProtocol] = [.h2, .h2c]

    @Test(arguments: http2)
    func parallelLoadsShareOneConnection(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/img", LoopbackResponse(body: .bytes(testBytes(30_000)), gate: gate))
            try await withSession(.testing(maxConnectionsPerHost: 8)) { session in
                try await withThrowingTaskGroup(of: Int?.self) { group in
                    for _ in 0..<20 {
                        group.addTask { await session.load(HTTPLoadRequest(url: server.url("/img"))).data?.count }
                    }
                    // All twenty are in flight at once, which eight HTTP/1.1 connections could not carry.
                    await server.waitForRequests(20, path: "/img")
                    gate.open()
                    var sizes: [Int?] = []
                    for try await size in group { sizes.append(size) }
                    #expect(sizes == Array(repeating: 30_000, count: 20))
                }
                let origin = "\(server.baseURL.scheme ?? "")://127.0.0.1:\(server.port)"
                let counts = session.connectionMetrics()[origin]
                #expect(counts?.opened == 1)
                #expect(counts?.streams == 20)
                #expect(counts?.requests == 20)
            }
            #expect(server.acceptedConnectionCount == 1)
            #expect(server.requests.allSatisfy { $0.version == "HTTP/2.0" })
        }
    }

    @Test(arguments: http2)
    func cancelResetsTheStreamAndTheConnectionKeepsServing(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/held", LoopbackResponse(body: .bytes(testBytes(50_000)), gate: gate, gatePoint: .afterBodyBytes(10_000)))
            server.route("/a", .image(testBytes(40_000), contentType: "image/png"))
            try await withSession { session in
                #expect(await session.load(HTTPLoadRequest(url: server.url("/a"))).data?.count == 40_000)
                let ended = Locked<Result<Void, HTTPLoadError>?>(nil)
                let transfer = HTTPTransfer(HTTPLoadRequest(url: server.url("/held")), session: session) { _ in }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    transfer.start { result in
                        ended.withLock { $0 = result }
                        continuation.resume()
                    }
                    Task {
                        await server.waitForRequests(1, path: "/held")
                        transfer.cancel()
                    }
                }
                #expect(ended.withLock { $0.map { if case .failure(.cancelled) = $0 { true } else { false } } } == true)
                // The server saw the response cut off by the client (its stream reset)...
                await server.waitForAborted(1, path: "/held")
                gate.open()
                // The same connection goes on: the reset ended one stream, not the connection.
                #expect(await session.load(HTTPLoadRequest(url: server.url("/a"))).data?.count == 40_000)
            }
            // ... and nothing else: the connection stayed.
            #expect(server.acceptedConnectionCount == 1)
        }
    }

    @Test(arguments: http2)
    func theServersStreamLimitIsRespected(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http, maxConcurrentStreams: 2) { server in
            server.route("/slow", LoopbackResponse(body: .bytes(testBytes(20_000)), delayBeforeHead: .milliseconds(40)))
            try await withSession { session in
                try await withThrowingTaskGroup(of: Int?.self) { group in
                    for _ in 0..<10 {
                        group.addTask { await session.load(HTTPLoadRequest(url: server.url("/slow"))).data?.count }
                    }
                    var sizes: [Int?] = []
                    for try await size in group { sizes.append(size) }
                    #expect(sizes == Array(repeating: 20_000, count: 10))
                }
            }
            // The loads sent before the server's SETTINGS arrived may exceed its limit (the client
            // assumes 100, as curl does); the server refused those, and they went again.
            #expect(server.peakConcurrentStreams <= 2)
            #expect(server.peakConcurrentStreams >= 1)
            #expect(server.acceptedConnectionCount == 1)
        }
    }

    @Test(arguments: http2)
    func aRefusedStreamIsSentAgainOnTheSameConnection(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            server.route("/img", sequence: [.refusedStream, .refusedStream, LoopbackResponse(body: .bytes(testBytes(25_000)))])
            try await withSession { session in
                let outcome = await session.load(HTTPLoadRequest(url: server.url("/img")))
                #expect(outcome.error == nil)
                #expect(outcome.data?.count == 25_000)
            }
            #expect(server.refusedStreamCount == 2)
            #expect(server.requestCount(for: "/img") == 3)
            // A refusal ends one stream, not the connection.
            #expect(server.acceptedConnectionCount == 1)
        }
    }

    @Test(arguments: http2)
    func aStreamRefusedEveryTimeFailsTyped(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            server.route("/img", .refusedStream)
            let configuration = HTTPSession.Configuration.testing()
            try await withSession(configuration) { session in
                let outcome = await session.load(HTTPLoadRequest(url: server.url("/img")))
                guard case .connectionFailed? = outcome.error else {
                    Issue.record("expected connectionFailed, got \(String(describing: outcome.error))")
                    return
                }
            }
            // Sent again a bounded number of times, not forever.
            #expect(server.requestCount(for: "/img") >= 2)
            #expect(server.requestCount(for: "/img") <= (configuration.maxConnectionsPerHost ?? 8) + 1)
        }
    }

    @Test(arguments: http2)
    func streamsAboveGoAwayAreRetriedOnANewConnection(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/img", LoopbackResponse(body: .bytes(testBytes(25_000)), gate: gate))
            try await withSession { session in
                try await withThrowingTaskGroup(of: HTTPOutcome.self) { group in
                    for _ in 0..<4 {
                        group.addTask { await session.load(HTTPLoadRequest(url: server.url("/img"))) }
                    }
                    await server.waitForRequests(4, path: "/img")
                    // Streams 1 and 3 were taken; 5 and 7 were not, and go again elsewhere.
                    await server.goAway(lastStreamID: 3)
                    await server.waitForRequests(6, path: "/img")
                    gate.open()
                    var outcomes: [HTTPOutcome] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    #expect(outcomes.map(\.data?.count) == Array(repeating: 25_000, count: 4))
                    #expect(outcomes.allSatisfy { $0.error == nil })
                }
            }
            #expect(server.acceptedConnectionCount == 2)
            #expect(server.requestCount(for: "/img") == 6)
        }
    }

    @Test func alpnFallsBackToHTTP1WhenTheServerOffersOnlyIt() async throws {
        let tls = try LoopbackTLS.loopback()
        try await withServer(tls: tls) { server in
            server.route("/a", .image(testBytes(70_000), contentType: "image/png"))
            var configuration = HTTPSession.Configuration.testing()
            configuration.trustedCertificatesPEM = [tls.certificatePEM]
            // `auto` is the default: ALPN offers h2 and HTTP/1.1, and this server picks HTTP/1.1.
            #expect(configuration.httpVersion == .auto)
            try await withSession(configuration) { session in
                for _ in 0..<2 {
                    #expect(await session.load(HTTPLoadRequest(url: server.url("/a"))).data?.count == 70_000)
                }
                let counts = session.connectionMetrics()["https://127.0.0.1:\(server.port)"]
                #expect(counts?.streams == 0)
                #expect(counts?.reused == 1)
            }
            #expect(server.requests.map(\.version) == ["HTTP/1.1", "HTTP/1.1"])
            // Asked for HTTP/2 only, the client refuses a server that will not speak it.
            configuration.httpVersion = .http2
            try await withSession(configuration) { session in
                let outcome = await session.load(HTTPLoadRequest(url: server.url("/a")))
                guard case .connectionFailed(let reason)? = outcome.error else {
                    Issue.record("expected connectionFailed, got \(String(describing: outcome.error))")
                    return
                }
                #expect(reason.contains("HTTP/2"))
            }
        }
    }

    @Test func autoPicksHTTP2WhenTheServerOffersIt() async throws {
        let tls = try LoopbackTLS.loopback()
        try await withShutdown(of: try await LoopbackServer.start(tls: tls, http2: true), { try await $0.shutdown() }) { server in
            server.route("/a", .image(testBytes(1_000), contentType: "image/png"))
            var configuration = HTTPSession.Configuration.testing()
            configuration.trustedCertificatesPEM = [tls.certificatePEM]
            try await withSession(configuration) { session in
                #expect(await session.load(HTTPLoadRequest(url: server.url("/a"))).data?.count == 1_000)
            }
            #expect(server.requests.map(\.version) == ["HTTP/2.0"])
            // And HTTP/1.1 only still gets HTTP/1.1 from the same server.
            configuration.httpVersion = .http1_1
            try await withSession(configuration) { session in
                #expect(await session.load(HTTPLoadRequest(url: server.url("/a"))).data?.count == 1_000)
            }
            #expect(server.requests.map(\.version) == ["HTTP/2.0", "HTTP/1.1"])
        }
    }

    @Test(arguments: http2)
    func largeBodiesArriveComplete(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            let sizes = [150_000, 200_000, 2_000_000]
            for size in sizes { server.route("/\(size)", .image(testBytes(size, seed: UInt8(size % 251)), contentType: "image/png")) }
            try await withSession { session in
                try await withThrowingTaskGroup(of: (Int, Data?, HTTPLoadError?).self) { group in
                    for size in sizes + sizes {
                        group.addTask {
                        let outcome = await session.load(HTTPLoadRequest(url: server.url("/\(size)")))
                        return (size, outcome.data, outcome.error)
                    }
                    }
                    for try await (size, data, error) in group {
                        #expect(data == testBytes(size, seed: UInt8(size % 251)), "\(size): \(String(describing: error))")
                    }
                }
            }
            #expect(server.acceptedConnectionCount == 1)
        }
    }

    /// A server may send anything: a header block past the client's limit ends the load with a
    /// typed error (the connection is closed), never a crash or an unbounded buffer.
    @Test(arguments: http2)
    func anOversizedHeaderBlockIsATypedError(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            server.route("/big", LoopbackResponse(headers: ["X-Big": String(repeating: "a", count: 200_000)],
                                                  body: .bytes(testBytes(10))))
            try await withSession { session in
                let outcome = await session.load(HTTPLoadRequest(url: server.url("/big")))
                #expect(outcome.data == nil)
                #expect(outcome.failedTransiently)
            }
        }
    }
}
