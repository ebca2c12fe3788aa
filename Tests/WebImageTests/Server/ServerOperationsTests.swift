#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// Coalescing, the output caches, backpressure, graceful shutdown and /metrics.
@Suite("webimage serve: operations")
struct ServerOperationsTests {
    private func metrics(_ server: ServerHarness) async throws -> String {
        String(decoding: try await ServerTestClient.send(port: server.port, "/metrics").body, as: UTF8.self)
    }

    /// The value of the sample line that starts with `prefix` (a name with its labels).
    private func sample(_ text: String, _ prefix: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }
            .flatMap { Double($0.split(separator: " ").last.map(String.init) ?? "") }
    }

    @Test func identicalConcurrentRequestsMakeOneFetchAndOneDecode() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.concurrency = 4 }
        let gate = LoopbackGate()
        server.origin.route("/photo.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"],
                                                           body: .bytes(ServerTestImages.photo), gate: gate))
        let query = "url=" + server.source("/photo.jpg") + "&w=120&fit=cover&h=90"
        let replies = try await withThrowingTaskGroup(of: HTTPReply.self) { group in
            for _ in 0..<100 { group.addTask { try await server.get(query) } }
            // The source is held until the first fetch reaches it; every request either joins that
            // render or, arriving after it, finds its output in the cache.
            await server.origin.waitForRequests(1, path: "/photo.jpg")
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.count == 100)
        #expect(replies.allSatisfy { $0.status == 200 && $0.body == replies[0].body })
        #expect(server.origin.requestCount(for: "/photo.jpg") == 1)
        let text = try await metrics(server)
        #expect(sample(text, "webimage_renders_total") == 1)
        #expect(sample(text, "webimage_source_fetches_total") == 1)
        try await server.stop()
    }

    @Test func repeatsAreServedFromMemoryAndDiskWithoutDecoding() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await ServerHarness.start { configuration, _ in configuration.cacheDirectory = directory.path }
        first.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let query = "url=" + first.source("/photo.jpg") + "&w=50"
        let original = try await first.get(query)
        let repeated = try await first.get(query)
        #expect(repeated.body == original.body && repeated.header("ETag") == original.header("ETag"))
        var text = try await metrics(first)
        #expect(sample(text, "webimage_renders_total") == 1)
        #expect(sample(text, "webimage_cache_hits_total{tier=\"memory\"}") == 1)
        // Another Accept that negotiates to another format is another output.
        let webp = try await first.get(query, headers: [("Accept", "image/webp")])
        #expect(ImageFormat.detect(webp.body) == .webp)
        text = try await metrics(first)
        #expect(sample(text, "webimage_renders_total") == 2)
        // Rendered from the source kept since the first render: not fetched again.
        #expect(first.origin.requestCount(for: "/photo.jpg") == 1)
        let originPort = first.origin.port
        try await first.stop()

        // A new process over the same directory: from disk, no fetch, no decode. (The origin is
        // gone: a fetch would fail.)
        let second = try await ServerHarness.start { configuration, _ in
            configuration.cacheDirectory = directory.path
            configuration.allowedSources = ["127.0.0.1:\(originPort)"]
        }
        let fromDisk = try await second.get("url=" + second.encode("http://127.0.0.1:\(originPort)/photo.jpg") + "&w=50")
        #expect(fromDisk.status == 200)
        #expect(fromDisk.body == original.body && fromDisk.header("ETag") == original.header("ETag"))
        text = try await metrics(second)
        #expect(sample(text, "webimage_cache_hits_total{tier=\"disk\"}") == 1)
        #expect(sample(text, "webimage_renders_total") == 0)
        try await second.stop()
    }

    @Test func overConcurrencyIs503WithRetryAfter() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.concurrency = 1 }
        let gate = LoopbackGate()
        server.origin.route("/held.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"],
                                                          body: .bytes(ServerTestImages.photo), gate: gate))
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let held = Task { try await server.get("url=" + server.source("/held.jpg")) }
        await server.origin.waitForRequests(1, path: "/held.jpg")
        let refused = try await server.get("url=" + server.source("/photo.jpg"))
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.errorCode == "overloaded")
        #expect(server.origin.requestCount(for: "/photo.jpg") == 0)
        // Joining the render in progress costs no admission.
        let joined = Task { try await server.get("url=" + server.source("/held.jpg")) }
        gate.open()
        #expect(try await held.value.status == 200)
        #expect(try await joined.value.status == 200)
        // The slot is free again.
        #expect(try await server.get("url=" + server.source("/photo.jpg")).status == 200)
        // Health and metrics are not image work: never refused.
        #expect(try await ServerTestClient.send(port: server.port, "/healthz").status == 200)
        try await server.stop()
    }

    @Test func gracefulShutdownLetsInFlightRequestsFinish() async throws {
        let server = try await ServerHarness.start()
        let gate = LoopbackGate()
        server.origin.route("/held.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"],
                                                          body: .bytes(ServerTestImages.photo), gate: gate))
        let inFlight = Task { try await server.get("url=" + server.source("/held.jpg") + "&w=10") }
        await server.origin.waitForRequests(1, path: "/held.jpg")
        await server.server.shutdown()
        gate.open()
        let reply = try await inFlight.value
        #expect(reply.status == 200)
        #expect(try ServerTestImages.decode(reply.body).width == 10)
        try await server.stop()
        // Stopped: nothing listens any more.
        await #expect(throws: (any Error).self) { try await ServerTestClient.send(port: server.port, "/healthz") }
    }

    @Test func metricsExposition() async throws {
        let server = try await ServerHarness.start()
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let image = try await server.get("url=" + server.source("/photo.jpg") + "&w=30")
        _ = try await server.get("url=" + server.source("/photo.jpg") + "&w=30")
        _ = try await server.get("w=1")
        let text = try await metrics(server)
        #expect(sample(text, "webimage_http_requests_total{status=\"200\"}") == 2)
        #expect(sample(text, "webimage_http_requests_total{status=\"400\"}") == 1)
        #expect(text.contains("webimage_http_request_duration_seconds_bucket{le="))
        #expect(sample(text, "webimage_http_request_duration_seconds_count") == 3)
        #expect(sample(text, "webimage_source_fetches_total") == 1)
        #expect(sample(text, "webimage_cache_hits_total{tier=\"memory\"}") == 1)
        #expect(sample(text, "webimage_bytes_out_total") == Double(2 * image.body.count))
        try await server.stop()
    }
}
