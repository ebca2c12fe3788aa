import Foundation
import Testing
import WebImageHTTP
import WebImageTestSupport

/// The HTTP stack's own HTTP/1.1 connections, observed at the loopback server: what goes on the
/// request line, keep-alive reuse, the per-host limit, and the retry of a request that met a
/// connection the server had already dropped. HTTP/1.1 only: keep-alive reuse, the per-host
/// connection limit and stale keep-alive sockets are HTTP/1.1 ideas (HTTP/2's counterparts,
/// one multiplexed connection, the stream limit and GOAWAY, are in ``HTTP2Tests``); the request
/// line runs over both.
@Suite("HTTP connections", .timeLimit(.minutes(1)))
struct HTTPConnectionTests {
    @Test(arguments: LoopbackProtocol.allCases)
    func requestLineKeepsThePercentEncodedPathAndQuery(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/dir/a%20b.png", .image(testBytes(100), contentType: "image/png"))
            let url = try #require(URL(string: "\(server.baseURL.absoluteString)/dir/a%20b.png?size=2&q=%2F#fragment"))
            try await withSession { session in
                let outcome = await session.load(HTTPLoadRequest(url: url))
                #expect(outcome.error == nil)
            }
            let request = try #require(server.requests.first)
            #expect(request.uri == "/dir/a%20b.png?size=2&q=%2F")
            // HTTP/2 carries the host as :authority, which the server reads back as Host.
            #expect(request.headers["host"] == "127.0.0.1:\(server.baseURL.port ?? 0)")
        }
    }

    /// IP literals are connected to directly; a host name still goes through the resolver.
    @Test(.enabled(if: (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8))?.contains("localhost") ?? false,
                   "/etc/hosts does not name localhost"))
    func hostNameIsResolved() async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            let url = try #require(URL(string: "http://localhost:\(server.baseURL.port ?? 0)/a"))
            try await withSession { session in
                let outcome = await session.load(HTTPLoadRequest(url: url))
                #expect(outcome.data?.count == 100)
            }
            #expect(server.requests.first?.headers["host"] == "localhost:\(server.baseURL.port ?? 0)")
        }
    }

    @Test func sequentialLoadsReuseOneConnection() async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(50_000), contentType: "image/png"))
            try await withSession { session in
                for _ in 0..<5 {
                    let outcome = await session.load(HTTPLoadRequest(url: server.url("/a")))
                    #expect(outcome.data?.count == 50_000)
                }
            }
            #expect(server.requests.count == 5)
            #expect(Set(server.requests.map(\.connection)).count == 1)
        }
    }

    @Test func concurrentLoadsStayWithinThePerHostLimit() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/slow", LoopbackResponse(body: .bytes(testBytes(1_000)), gate: gate))
            try await withSession(.testing(idleTimeout: .seconds(10), maxConnectionsPerHost: 2)) { session in
                try await withThrowingTaskGroup(of: Int?.self) { group in
                    for _ in 0..<6 {
                        group.addTask { await session.load(HTTPLoadRequest(url: server.url("/slow"))).data?.count }
                    }
                    // Two requests reach the server; the other four wait for a connection.
                    await server.waitForRequests(2, path: "/slow")
                    #expect(server.requestCount(for: "/slow") == 2)
                    gate.open()
                    var sizes: [Int?] = []
                    for try await size in group { sizes.append(size) }
                    #expect(sizes == Array(repeating: 1_000, count: 6))
                }
            }
            #expect(server.requestCount(for: "/slow") == 6)
            #expect(Set(server.requests.map(\.connection)).count == 2)
        }
    }

    @Test func aDroppedKeepAliveConnectionIsRetriedOnANewOne() async throws {
        try await withServer { server in
            server.route("/first", .image(testBytes(1_000), contentType: "image/png"))
            var dropping = LoopbackResponse.image(testBytes(2_000), contentType: "image/png")
            dropping.dropsReusedConnection = true
            server.route("/second", dropping)
            try await withSession { session in
                let first = await session.load(HTTPLoadRequest(url: server.url("/first")))
                #expect(first.data?.count == 1_000)
                let second = await session.load(HTTPLoadRequest(url: server.url("/second")))
                #expect(second.error == nil)
                #expect(second.data?.count == 2_000)
            }
            // The first try met the reused connection (closed unanswered), the retry a new one.
            let tries = server.requests.filter { $0.path == "/second" }
            #expect(tries.count == 2)
            #expect(tries.map(\.connection) == [0, 1])
        }
    }

    @Test func aResetOnAFreshConnectionIsNotRetried() async throws {
        try await withServer { server in
            server.route("/reset", LoopbackResponse(body: .bytes(testBytes(10_000)), resetAfterBytes: 100))
            try await withSession { session in
                let outcome = await session.load(HTTPLoadRequest(url: server.url("/reset")))
                #expect(outcome.error != nil)
                #expect(outcome.failedTransiently)
            }
            #expect(server.requestCount(for: "/reset") == 1)
        }
    }
}
