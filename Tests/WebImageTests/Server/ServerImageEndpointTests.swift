#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `GET /image` over real HTTP: every parameter, the negotiation and the response headers.
@Suite("webimage serve: GET /image")
struct ServerImageEndpointTests {
    private func withServer(_ configure: (inout ServerConfiguration, LoopbackServer) -> Void = { _, _ in },
                            _ body: (ServerHarness) async throws -> Void) async throws {
        let harness = try await ServerHarness.start(configure)
        harness.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        harness.origin.route("/alpha.png", .image(ServerTestImages.alpha, contentType: "image/png"))
        harness.origin.route("/anim.webp", .image(ServerTestImages.animation, contentType: "image/webp"))
        harness.origin.route("/rotated.jpg", .image(ServerTestImages.rotated, contentType: "image/jpeg"))
        try await withShutdown(of: harness, { try await $0.stop() }, body)
    }

    private func size(_ reply: HTTPReply) throws -> String {
        let image = try ServerTestImages.decode(reply.body)
        return "\(image.width)x\(image.height)"
    }

    @Test func widthHeightAndFitModes() async throws {
        try await withServer { server in
            let photo = "url=" + server.source("/photo.jpg") + "&format=jpeg"
            let cases: [(String, String)] = [
                ("&w=100&h=100", "100x75"),              // contain (the default)
                ("&w=100&h=100&fit=contain", "100x75"),
                ("&w=100&h=100&fit=cover", "100x100"),
                ("&w=100&h=50&fit=fill", "100x50"),
                ("&w=160", "160x120"),                   // one side: aspect ratio kept
                ("&h=120", "160x120"),
                ("&w=160&fit=cover", "160x120"),
                ("", "640x480"),                         // neither: the original size
                ("&w=1000&h=1000", "640x480"),           // never enlarged...
                ("&w=1280&enlarge=1", "1280x960"),       // ...unless asked
                ("&w=1000&h=1000&fit=cover&enlarge=0", "480x480"),
            ]
            for (extra, expected) in cases {
                let reply = try await server.get(photo + extra)
                #expect(reply.status == 200, "\(extra)")
                #expect(try size(reply) == expected, "\(extra)")
            }
        }
    }

    @Test func fixedFormatsQualityAndContentType() async throws {
        try await withServer { server in
            let base = "url=" + server.source("/photo.jpg") + "&w=200"
            var formats: [(String, ImageFormat)] = [("jpeg", .jpeg), ("png", .png), ("webp", .webp)]
            if ImageCodersManager.shared.canEncode(.avif) { formats.append(("avif", .avif)) }
            for (name, format) in formats {
                let reply = try await server.get(base + "&format=" + name)
                #expect(reply.status == 200)
                #expect(ImageFormat.detect(reply.body) == format, "\(name)")
                #expect(reply.header("Content-Type") == format.mimeType)
                #expect(reply.header("Content-Length") == String(reply.body.count))
                // A fixed format does not depend on Accept.
                #expect(reply.header("Vary") == nil)
            }
            let low = try await server.get(base + "&format=jpeg&q=10")
            let high = try await server.get(base + "&format=jpeg&q=95")
            #expect(low.body.count < high.body.count)
            #expect(low.header("ETag") != high.header("ETag"))
        }
    }

    @Test func autoFormatFollowsAccept() async throws {
        try await withServer { server in
            let photo = "url=" + server.source("/photo.jpg") + "&w=100"
            let avif = ImageCodersManager.shared.canEncode(.avif)
            let both = try await server.get(photo, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(ImageFormat.detect(both.body) == (avif ? .avif : .webp))
            #expect(both.header("Vary") == "Accept")
            let webp = try await server.get(photo + "&format=auto", headers: [("Accept", "image/webp,*/*;q=0.8")])
            #expect(ImageFormat.detect(webp.body) == .webp)
            // q=0 is a refusal; */* alone does not count as accepting WebP or AVIF.
            let refused = try await server.get(photo, headers: [("Accept", "image/webp;q=0, */*")])
            #expect(ImageFormat.detect(refused.body) == .jpeg)
            let plain = try await server.get(photo)
            #expect(ImageFormat.detect(plain.body) == .jpeg)
            #expect(plain.header("Vary") == "Accept")
            let alpha = try await server.get("url=" + server.source("/alpha.png"))
            #expect(ImageFormat.detect(alpha.body) == .png)
            #expect(try ServerTestImages.decode(alpha.body).hasAlpha)
        }
    }

    @Test func animatedSourcesStayAnimatedForWebP() async throws {
        try await withServer { server in
            let source = "url=" + server.source("/anim.webp")
            let webp = try await server.get(source + "&format=webp&w=20")
            let frames = try ServerTestImages.decode(webp.body)
            #expect(frames.frames.count == 3 && frames.width == 20 && frames.height == 10)
            // Auto with WebP accepted keeps the motion (even when AVIF is accepted too).
            let auto = try await server.get(source, headers: [("Accept", "image/avif,image/webp")])
            #expect(ImageFormat.detect(auto.body) == .webp)
            #expect(try ServerTestImages.decode(auto.body).frames.count == 3)
            // A format that cannot animate gets the first frame.
            let png = try await server.get(source + "&format=png")
            #expect(try ServerTestImages.decode(png.body).frames.count == 1)
        }
    }

    @Test func exifOrientationIsApplied() async throws {
        try await withServer { server in
            let reply = try await server.get("url=" + server.source("/rotated.jpg") + "&format=png")
            #expect(reply.status == 200)
            #expect(try size(reply) == "48x64")
            let resized = try await server.get("url=" + server.source("/rotated.jpg") + "&format=png&w=24")
            #expect(try size(resized) == "24x32")
        }
    }

    @Test func cacheHeadersETagAnd304() async throws {
        try await withServer({ configuration, _ in configuration.cacheControlMaxAge = 3600 }) { server in
            let query = "url=" + server.source("/photo.jpg") + "&w=64"
            let first = try await server.get(query)
            #expect(first.status == 200)
            #expect(first.header("Cache-Control") == "public, max-age=3600")
            let etag = try #require(first.header("ETag"))
            // Strong: quoted, no W/ prefix.
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 10)
            #expect(first.header("X-Request-Id") != nil)
            let again = try await server.get(query)
            #expect(again.header("ETag") == etag && again.body == first.body)

            let notModified = try await server.get(query, headers: [("If-None-Match", etag)])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") == etag)
            #expect(notModified.header("Cache-Control") == "public, max-age=3600")
            #expect(notModified.header("Vary") == "Accept")
            let listed = try await server.get(query, headers: [("If-None-Match", "\"other\", \(etag)")])
            #expect(listed.status == 304)
            let other = try await server.get(query, headers: [("If-None-Match", "\"other\"")])
            #expect(other.status == 200 && other.body == first.body)
            // Other options, another ETag.
            let wider = try await server.get("url=" + server.source("/photo.jpg") + "&w=65")
            #expect(wider.header("ETag") != etag)
        }
    }

    @Test func headAnswersHeadersWithoutBody() async throws {
        try await withServer { server in
            let query = "url=" + server.source("/photo.jpg") + "&w=80&format=webp"
            let get = try await server.get(query)
            let head = try await ServerTestClient.image(port: server.port, query, method: .HEAD)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(head.header("Content-Type") == "image/webp")
            #expect(head.header("ETag") == get.header("ETag"))
            let missing = try await ServerTestClient.image(port: server.port, "w=1", method: .HEAD)
            #expect(missing.status == 400 && missing.body.isEmpty)
        }
    }

    @Test func healthzAndThePlaygroundPage() async throws {
        try await withServer { server in
            let reply = try await ServerTestClient.send(port: server.port, "/healthz")
            #expect(reply.status == 200)
            #expect(String(decoding: reply.body, as: UTF8.self) == "ok\n")
            let page = try await ServerTestClient.send(port: server.port, "/")
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(String(decoding: page.body, as: UTF8.self).contains("/image?"))
        }
    }
}
