import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Unexpected protocol switches end the connection rather than returning it to the pool.
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
