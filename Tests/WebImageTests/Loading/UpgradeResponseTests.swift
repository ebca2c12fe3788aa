import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Unexpected protocol switches and interim responses end the connection rather than returning it to the pool.
/// HTTP/1.1 only: `101 Switching Protocols` does not exist in HTTP/2 (RFC 9113 §8.6), and what is
/// checked here is the fate of the HTTP/1.1 socket after an interim head.
@Suite("Interim and upgrade responses", .timeLimit(.minutes(1)))
struct UpgradeResponseTests {
    @Test func a101ClosesTheConnectionInsteadOfPoolingIt() async throws {
        try await withServer { server in
            server.route("/upgrade", LoopbackResponse(status: 101, headers: ["Upgrade": "websocket", "Connection": "upgrade"]))
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(2), maxConnectionsPerHost: 1)) { loader in
                let upgraded = await collect(loader.load(ImageLoadRequest(url: server.url("/upgrade"))))
                #expect(upgraded.error?.code == "httpStatus", "\(String(describing: upgraded.error))")
                #expect(upgraded.error?.isTransient == false)
                let next = await collect(loader.load(ImageLoadRequest(url: server.url("/a"))))
                #expect(next.error == nil, "\(String(describing: next.error))")
                #expect(next.data?.count == 10)
            }
            let upgrade = try #require(server.requests.first { $0.path == "/upgrade" })
            let after = try #require(server.requests.first { $0.path == "/a" })
            #expect(after.connection != upgrade.connection, "the upgraded connection went back to the pool")
        }
    }

    /// Interim heads the client never asked for (102 Processing, 103 Early Hints, a 100 Continue
    /// to a request without `Expect`) before the final 200: the image loads, and the connection is
    /// closed after it rather than pooled, so the next request opens a new one.
    @Test(arguments: [[102], [103], [100, 103]])
    func unexpectedInterimResponsesKeepTheConnectionOutOfThePool(_ statuses: [Int]) async throws {
        try await withServer { server in
            var interim = LoopbackResponse.image(testBytes(12), contentType: "image/png")
            interim.interimStatuses = statuses
            server.route("/interim", interim)
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(2), maxConnectionsPerHost: 1)) { loader in
                let first = await collect(loader.load(ImageLoadRequest(url: server.url("/interim"))))
                #expect(first.error == nil, "\(String(describing: first.error))")
                #expect(first.data?.count == 12)
                let next = await collect(loader.load(ImageLoadRequest(url: server.url("/a"))))
                #expect(next.data?.count == 10, "\(String(describing: next.error))")
            }
            let interimRequest = try #require(server.requests.first { $0.path == "/interim" })
            let after = try #require(server.requests.first { $0.path == "/a" })
            #expect(after.connection != interimRequest.connection, "the connection that sent \(statuses) went back to the pool")
            #expect(server.requestCount(for: "/interim") == 1)
        }
    }

    /// Without interim heads the same two loads share one connection: the test above sees the pool.
    @Test func aPlainResponseLeavesTheConnectionPooled() async throws {
        try await withServer { server in
            server.route("/plain", .image(testBytes(12), contentType: "image/png"))
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(2), maxConnectionsPerHost: 1)) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/plain")))).data?.count == 12)
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data?.count == 10)
            }
            #expect(Set(server.requests.map(\.connection)).count == 1)
        }
    }

    @Test func a101OnAReusedConnectionIsNotRetriedAsStale() async throws {
        try await withServer { server in
            server.route("/upgrade", LoopbackResponse(status: 101, headers: ["Upgrade": "websocket", "Connection": "upgrade"]))
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(2), maxConnectionsPerHost: 1)) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data?.count == 10)
                let upgraded = await collect(loader.load(ImageLoadRequest(url: server.url("/upgrade"))))
                #expect(upgraded.error == .httpStatus(101))
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data?.count == 10)
            }
            #expect(server.requestCount(for: "/upgrade") == 1)
            #expect(Set(server.requests.map(\.connection)).count == 2)
        }
    }
}
