import Foundation
import NIOCore
import NIOPosix
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// Operations: readiness from start to drain, the client and render timeouts, and the standalone
/// server's `/metrics` carrying the library's own instruments.
@Suite("webimage serve: readiness, timeouts, process metrics", .serialized, .timeLimit(.minutes(2)))
struct ServerLifecycleTests {
    @Test func readinessIsReadyWhileServingAnd503FromShutdownWhileTheDelayLastsAndServes() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.shutdownDelay = .seconds(3) }
        server.origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let ready = try await ServerTestClient.send(port: server.port, "/readyz")
        #expect(ready.status == 200 && String(decoding: ready.body, as: UTF8.self) == "ready\n")
        #expect(try await ServerTestClient.send(port: server.port, "/healthz").status == 200)

        await server.server.shutdown()
        // The flip happens on the group's shutdown task: look until it shows (each look is a request).
        var draining = try await ServerTestClient.send(port: server.port, "/readyz")
        for _ in 0..<200 where draining.status == 200 {
            await Task.yield()
            draining = try await ServerTestClient.send(port: server.port, "/readyz")
        }
        #expect(draining.status == 503 && String(decoding: draining.body, as: UTF8.self) == "draining\n")
        // Still serving during the delay: liveness and work.
        #expect(try await ServerTestClient.send(port: server.port, "/healthz").status == 200)
        #expect(try await server.get("url=\(server.source("/a.jpg"))&w=16").status == 200)
        try await server.stop()
    }

    /// Bytes sent raw on one connection, and everything read until the server closes it.
    private func rawExchange(port: Int, sending bytes: String) async throws -> (received: String, elapsed: Duration) {
        let start = ContinuousClock.now
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        var received = ""
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: bytes))
            for try await chunk in inbound { received += String(buffer: chunk) }
        }
        return (received, ContinuousClock.now - start)
    }

    @Test func aClientThatNeverFinishesItsHeadOrIdlesIsDisconnected() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.clientTimeout = .milliseconds(500) }
        // A slow-loris head that never ends: closed with no answer, after the timeout and not long after.
        let partial = try await rawExchange(port: server.port, sending: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        #expect(partial.received.isEmpty)
        #expect(partial.elapsed >= .milliseconds(450) && partial.elapsed < .seconds(10), "\(partial.elapsed)")
        // A complete request is answered; then the idle keep-alive connection is closed.
        let idle = try await rawExchange(port: server.port, sending: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(idle.received.hasPrefix("HTTP/1.1 200") && idle.received.hasSuffix("ok\n"), "\(idle.received)")
        #expect(idle.elapsed >= .milliseconds(450) && idle.elapsed < .seconds(10), "\(idle.elapsed)")
        try await server.stop()
    }

    @Test func aRenderPastTheTimeoutIs503AndTheServiceGoesOn() async throws {
        // 6 MP: its PNG decode alone takes far longer than a millisecond.
        let large = try SampleImages.encoded(.png, width: 3000, height: 2000, seed: 3)
        let server = try await ServerHarness.start { configuration, _ in configuration.renderTimeout = .milliseconds(1) }
        server.origin.route("/large.png", .image(large, contentType: "image/png"))
        let reply = try await server.get("url=\(server.source("/large.png"))&w=100&format=jpeg")
        #expect(reply.status == 503 && reply.errorCode == "renderTimedOut", "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        #expect(reply.header("Retry-After") == "1")
        let metrics = try await ServerTestClient.send(port: server.port, "/metrics")
        #expect(PrometheusText(String(decoding: metrics.body, as: UTF8.self)).sum("webimage_render_timeouts_total") == 1)
        // Nothing was cached for it: asked again, it is rendered (and times out) again.
        #expect(try await server.get("url=\(server.source("/large.png"))&w=100&format=jpeg").errorCode == "renderTimedOut")
        try await server.stop()
    }

    @Test(.enabled(if: ServeInstance.isAvailable, "the webimage binary is not built"))
    func theStandaloneMetricsCarryTheLibrarysInstruments() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let instance = try await ServeInstance.start(["--allow-private-source", "127.0.0.1:\(origin.port)"])
        let source = origin.url("/a.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        #expect(try await ServerTestClient.send(port: instance.port, "/image?url=\(source)&w=20").status == 200)
        let metrics = try await instance.metrics()
        #expect(metrics.sum("webimage_downloader_requests") == 1, "the library's downloader counter is not in /metrics")
        #expect(metrics.sum("webimage_downloader_bytes") == Double(ServerTestImages.photo.count))
        #expect(metrics.sum("webimage_renders_total") == 1)
        await instance.stop()
        try await origin.shutdown()
    }
}
