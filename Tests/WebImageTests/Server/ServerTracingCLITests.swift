#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageTestSupport

/// The binary's own traces: `webimage serve` bootstraps swift-otel. With an OTLP endpoint
/// (`--otel-endpoint` or `OTEL_EXPORTER_OTLP_ENDPOINT`) its spans reach a collector, here a
/// loopback server that records the protobuf bodies POSTed to `/v1/traces`; with or without
/// one, a request's `traceparent` continues to the origin.
@Suite("webimage serve: traces from the binary",
       .enabled(if: ServeInstance.isAvailable, "the webimage binary is not built"), .timeLimit(.minutes(2)))
struct ServerTracingCLITests {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parentSpanID = "00f067aa0ba902b7"

    /// The trace id's 16 bytes, as OTLP's protobuf carries them.
    static var traceIDBytes: Data {
        var bytes = Data()
        var index = traceID.startIndex
        while index < traceID.endIndex {
            let next = traceID.index(index, offsetBy: 2)
            bytes.append(UInt8(traceID[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// Serves one traced request through an instance started with `arguments` and `environment`
    /// (the origin's address added); returns the `traceparent` the origin saw.
    private func tracedRequest(_ arguments: [String], environment: [String: String] = [:]) async throws -> String? {
        let origin = try await LoopbackServer.start()
        origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let instance = try await ServeInstance.start(["--allow-private-source", "127.0.0.1:\(origin.port)"] + arguments,
                                                     environment: environment)
        let url = origin.url("/photo.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let reply = try await ServerTestClient.send(port: instance.port, "/image?url=\(url)&w=32&format=png",
                                                    headers: [("traceparent", "00-\(Self.traceID)-\(Self.parentSpanID)-01")])
        #expect(reply.status == 200)
        // SIGTERM: the group stops the server, then the exporter, which sends what it holds.
        await instance.stop()
        try await origin.shutdown()
        return origin.requests.first { $0.path == "/photo.jpg" }?.headers["traceparent"]
    }

    private func collector() async throws -> LoopbackServer {
        let collector = try await LoopbackServer.start()
        // An empty ExportTraceServiceResponse.
        collector.route("/v1/traces", .image(Data(), contentType: "application/x-protobuf"))
        return collector
    }

    private func expectExported(to collector: LoopbackServer) async throws {
        let posts = collector.requests.filter { $0.path == "/v1/traces" && $0.method == "POST" }
        #expect(!posts.isEmpty, "nothing was exported")
        #expect(posts.allSatisfy { $0.headers["content-type"] == "application/x-protobuf" })
        #expect(posts.contains { $0.body.range(of: Self.traceIDBytes) != nil }, "no exported span carries the request's trace id")
        try await collector.shutdown()
    }

    @Test func withOTelEndpointSpansAreExportedAndTheTraceReachesTheOrigin() async throws {
        let collector = try await collector()
        let seen = try await tracedRequest(["--otel-endpoint", collector.origin])
        #expect(seen?.contains(Self.traceID) == true, "\(seen ?? "no traceparent")")
        #expect(seen?.contains(Self.parentSpanID) == false, "the fetch is a span of its own")
        try await expectExported(to: collector)
    }

    @Test func theStandardEnvironmentVariableExportsToo() async throws {
        let collector = try await collector()
        let seen = try await tracedRequest([], environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": collector.origin])
        #expect(seen?.contains(Self.traceID) == true, "\(seen ?? "no traceparent")")
        try await expectExported(to: collector)
    }

    @Test func withoutAnExporterTheTraceStillReachesTheOrigin() async throws {
        let seen = try await tracedRequest([])
        #expect(seen?.contains(Self.traceID) == true, "\(seen ?? "no traceparent")")
    }
}
