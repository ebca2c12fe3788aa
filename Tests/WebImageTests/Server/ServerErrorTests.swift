#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
#if canImport(Glibc)
import Glibc
#endif
import WebImage
import WebImageServer
import WebImageTestSupport

/// Every error status of `GET /image`, each with the JSON shape `{"error": {"code", "message"}}`.
@Suite("webimage serve: error statuses")
struct ServerErrorTests {
    private func expectError(_ reply: HTTPReply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == status, sourceLocation: sourceLocation)
        #expect(reply.errorCode == code, "\(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(reply.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
    }

    @Test func badParametersAre400() async throws {
        let server = try await ServerHarness.start()
        let photo = "url=" + server.source("/photo.jpg")
        for query in ["", "w=10", "url=", "url=not%20a%20url", photo + "&w=0", photo + "&w=abc", photo + "&h=99999",
                      photo + "&fit=stretch", photo + "&format=bmp", photo + "&q=0", photo + "&q=101",
                      photo + "&enlarge=yes", photo + "&zoom=2", photo + "&w=10&w=20"] {
            expectError(try await server.get(query), 400, "badParameter")
        }
        #expect(server.origin.totalRequestCount == 0)
        try await server.stop()
    }

    @Test func sourceStatusesMapTo404And502() async throws {
        let server = try await ServerHarness.start()
        server.origin.route("/missing.jpg", .status(404))
        server.origin.route("/broken.jpg", .status(500))
        server.origin.route("/teapot.jpg", .status(418))
        expectError(try await server.get("url=" + server.source("/missing.jpg")), 404, "sourceNotFound")
        expectError(try await server.get("url=" + server.source("/broken.jpg")), 502, "sourceFailed")
        expectError(try await server.get("url=" + server.source("/teapot.jpg")), 502, "sourceFailed")
        // A connection reset in the body.
        var reset = LoopbackResponse.image(ServerTestImages.photo, contentType: "image/jpeg")
        reset.resetAfterBytes = 100
        server.origin.route("/reset.jpg", reset)
        expectError(try await server.get("url=" + server.source("/reset.jpg")), 502, "sourceFailed")
        // An unknown endpoint is a 404 in the same shape.
        let unknown = try await ServerTestClient.send(port: server.port, "/nope")
        expectError(unknown, 404, "notFound")
        try await server.stop()
    }

    @Test func refusedConnectionIs502() async throws {
        // A port bound by a socket that does not listen: connection refused. (A port that was
        // listening and is closed could be taken again meanwhile, by the harness's own origin.)
        let (descriptor, port) = try ExternalTool.boundPort()
        defer { close(descriptor) }
        let server = try await ServerHarness.start { configuration, _ in configuration.allowedSources.append("127.0.0.1:\(port)") }
        expectError(try await server.get("url=" + server.encode("http://127.0.0.1:\(port)/x.jpg")), 502, "sourceFailed")
        try await server.stop()
    }

    @Test func silentSourceIs504() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.sourceTimeout = .milliseconds(300) }
        let gate = LoopbackGate()
        server.origin.route("/silent.jpg", LoopbackResponse(body: .bytes(ServerTestImages.photo), gate: gate))
        expectError(try await server.get("url=" + server.source("/silent.jpg")), 504, "sourceTimedOut")
        gate.open()
        try await server.stop()
    }

    @Test func oversizedSourcesAre413() async throws {
        let server = try await ServerHarness.start { configuration, _ in
            configuration.maxSourceBytes = Int64(ServerTestImages.photo.count - 1)
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        // Announced too long, and (chunked, no length) found too long while streaming.
        expectError(try await server.get("url=" + server.source("/photo.jpg")), 413, "sourceTooLarge")
        var chunked = LoopbackResponse.image(ServerTestImages.photo, contentType: "image/jpeg")
        chunked.sendsContentLength = false
        server.origin.route("/chunked.jpg", chunked)
        expectError(try await server.get("url=" + server.source("/chunked.jpg")), 413, "sourceTooLarge")
        try await server.stop()

        let pixels = try await ServerHarness.start { configuration, _ in configuration.maxSourcePixels = 640 * 480 - 1 }
        pixels.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        // Even a thumbnail request: the limit is on the source's declared size.
        expectError(try await pixels.get("url=" + pixels.source("/photo.jpg") + "&w=10"), 413, "sourceTooLarge")
        try await pixels.stop()
    }

    @Test func nonImagesAre415() async throws {
        let server = try await ServerHarness.start()
        server.origin.route("/page.html", .image(Data("<html>hello</html>".utf8), contentType: "text/html"))
        server.origin.route("/empty.jpg", .image(Data(), contentType: "image/jpeg"))
        server.origin.route("/cut.jpg", .image(ServerTestImages.photo.prefix(40), contentType: "image/jpeg"))
        expectError(try await server.get("url=" + server.source("/page.html")), 415, "unsupportedSource")
        expectError(try await server.get("url=" + server.source("/empty.jpg")), 415, "unsupportedSource")
        expectError(try await server.get("url=" + server.source("/cut.jpg")), 415, "unsupportedSource")
        try await server.stop()
    }

    @Test func signatures() async throws {
        let key = "s3cret"
        let server = try await ServerHarness.start { configuration, _ in configuration.signingKey = key }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let signer = RequestSignature(key: key)
        let query = "url=" + server.source("/photo.jpg") + "&w=32&format=png"
        let signature = signer.sign(query)
        // HMAC-SHA256 as everyone computes it (RFC 4231 test case 2).
        #expect(RequestSignature(key: "Jefe").sign("what do ya want for nothing?")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(try await server.get(query + "&sig=" + signature).status == 200)
        #expect(try await server.get(query + "&sig=" + signature.uppercased()).status == 200)
        // The signature may stand anywhere: it signs the other parameters in the order sent.
        let middle = "url=" + server.source("/photo.jpg") + "&sig=" + signature + "&w=32&format=png"
        #expect(try await server.get(middle).status == 200)
        expectError(try await server.get(query), 403, "badSignature")
        expectError(try await server.get(query + "&sig=00"), 403, "badSignature")
        expectError(try await server.get(query + "&sig=" + signer.sign(query + "&q=5")), 403, "badSignature")
        // Reordered parameters are another message.
        let reordered = "w=32&url=" + server.source("/photo.jpg") + "&format=png&sig=" + signature
        expectError(try await server.get(reordered), 403, "badSignature")
        #expect(server.origin.requestCount(for: "/photo.jpg") == 1)
        try await server.stop()
    }
}
