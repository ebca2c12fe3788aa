import Foundation
import Testing
@testable import WebImage
import WebImageServer
import WebImageTestSupport

/// `GET /info?url=...`: the source's header as JSON, read without decoding its pixels, under the
/// same signature and source rules as `/image`.
@Suite("webimage serve: GET /info", .serialized, .timeLimit(.minutes(1)))
struct ServerInfoTests {
    /// The body as a parser reads it: every key, `null` included.
    private func object(_ reply: HTTPReply) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: reply.body) as? [String: Any], "\(String(decoding: reply.body, as: UTF8.self))")
    }

    private func info(_ server: ServerHarness, _ path: String) async throws -> HTTPReply {
        try await ServerTestClient.send(port: server.port, "/info?url=\(server.source(path))")
    }

    @Test func theHeaderAsJSONWithEveryField() async throws {
        let server = try await ServerHarness.start()
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        server.origin.route("/alpha.png", .image(ServerTestImages.alpha, contentType: "image/png"))
        server.origin.route("/anim.webp", .image(ServerTestImages.animation, contentType: "image/webp"))
        server.origin.route("/rotated.jpg", .image(ServerTestImages.rotated, contentType: "image/jpeg"))

        let photo = try await info(server, "/photo.jpg")
        #expect(photo.status == 200 && photo.header("Content-Type") == "application/json")
        let fields = try object(photo)
        #expect(Set(fields.keys) == ["format", "width", "height", "frames", "orientation", "hasAlpha", "bytes", "colorProfile"])
        #expect(fields["format"] as? String == "jpeg" && fields["width"] as? Int == 640 && fields["height"] as? Int == 480)
        #expect(fields["frames"] as? Int == 1 && fields["orientation"] as? Int == 1 && fields["hasAlpha"] as? Bool == false)
        #expect(fields["bytes"] as? Int == ServerTestImages.photo.count)
        #expect(fields["colorProfile"] is NSNull, "no profile is null, not a missing key")

        let alpha = try object(try await info(server, "/alpha.png"))
        #expect(alpha["format"] as? String == "png" && alpha["hasAlpha"] as? Bool == true)
        let animation = try object(try await info(server, "/anim.webp"))
        #expect(animation["format"] as? String == "webp" && animation["frames"] as? Int == 3 && animation["width"] as? Int == 40)
        let rotated = try object(try await info(server, "/rotated.jpg"))
        #expect(rotated["orientation"] as? Int == 6 && rotated["width"] as? Int == 64)
        try await server.stop()
    }

    @Test func aHugeImageIsDescribedNotDecoded() async throws {
        // A PNG header declaring 20000×20000 (1.6 GB decoded) and no pixel data: /image refuses
        // it before decoding; /info reads it.
        func chunk(_ kind: String, _ body: [UInt8]) -> [UInt8] {
            let typed = Array(kind.utf8) + body
            return withUnsafeBytes(of: UInt32(body.count).bigEndian, Array.init) + typed
                + withUnsafeBytes(of: CRC32.checksum(Data(typed)).bigEndian, Array.init)
        }
        let side = withUnsafeBytes(of: UInt32(20_000).bigEndian, Array.init)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", side + side + [8, 6, 0, 0, 0]) + chunk("IEND", []))
        let server = try await ServerHarness.start()
        server.origin.route("/huge.png", .image(png, contentType: "image/png"))
        let reply = try await info(server, "/huge.png")
        #expect(reply.status == 200)
        let fields = try object(reply)
        #expect(fields["width"] as? Int == 20_000 && fields["height"] as? Int == 20_000 && fields["hasAlpha"] as? Bool == true)
        #expect(try await server.get("url=\(server.source("/huge.png"))&w=10").status == 413)
        try await server.stop()
    }

    @Test func theSameRulesAsImage() async throws {
        let server = try await ServerHarness.start { configuration, origin in
            configuration.signingKeys = ["secret"]
            configuration.allowedSourcePrefixes = ["http://127.0.0.1:\(origin.port)/ok/"]
        }
        server.origin.route("/ok/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        server.origin.route("/ok/text", .image(Data("not an image".utf8), contentType: "text/plain"))
        server.origin.route("/other/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let signer = RequestSignature(key: "secret")
        func signed(_ path: String, extra: String = "") -> String {
            let query = "url=\(server.source(path))\(extra)"
            return "/info?\(query)&sig=\(signer.sign(query))"
        }
        #expect(try await ServerTestClient.send(port: server.port, signed("/ok/a.jpg")).status == 200)
        let unsigned = try await info(server, "/ok/a.jpg")
        #expect(unsigned.status == 403 && unsigned.errorCode == "badSignature")
        let off = try await ServerTestClient.send(port: server.port, signed("/other/a.jpg"))
        #expect(off.status == 403 && off.errorCode == "sourceNotAllowed")
        let notImage = try await ServerTestClient.send(port: server.port, signed("/ok/text"))
        #expect(notImage.status == 415 && notImage.errorCode == "unsupportedSource")
        let extra = try await ServerTestClient.send(port: server.port, signed("/ok/a.jpg", extra: "&w=10"))
        #expect(extra.status == 400 && extra.errorCode == "badParameter")
        let missing = try await ServerTestClient.send(port: server.port, "/info")
        #expect(missing.status == 400 || missing.status == 403)
        try await server.stop()
    }

    /// `/info` takes a `--concurrency` slot as a render does: a flood of distinct sources is 503, not a growing queue of fetches.
    @Test func infoIsAdmittedAsRendersAre() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.concurrency = 1 }
        let gate = LoopbackGate()
        server.origin.route("/held.jpg", LoopbackResponse(body: .bytes(ServerTestImages.photo), gate: gate))
        server.origin.route("/other.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let held = Task { try await info(server, "/held.jpg") }
        // The first request holds the one slot once its fetch reached the origin.
        while server.origin.requestCount(for: "/held.jpg") == 0 { await Task.yield() }
        let refused = try await info(server, "/other.jpg")
        #expect(refused.status == 503 && refused.errorCode == "overloaded" && refused.header("Retry-After") == "1")
        gate.open()
        #expect(try await held.value.status == 200)
        #expect(try await info(server, "/other.jpg").status == 200, "the slot was given back")
        try await server.stop()
    }
}
