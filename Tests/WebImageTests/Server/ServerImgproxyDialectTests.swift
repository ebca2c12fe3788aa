import Foundation
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// `--dialect imgproxy` end to end: the URLs the PyPI `imgproxy` package's `ImgProxy` makes,
/// signed and unsigned, with base64 and plain sources, answered by an in-process `ImageServer`
/// from the loopback origin with imgproxy's sizes (its `processing/prepare.go` for the 640×480
/// photo) and formats.
@Suite("webimage serve: imgproxy's URLs from the imgproxy package", .enabled(if: ImgproxyReference.available,
       "the imgproxy package (PyPI, 1.0.0) is not installed (scripts/test.sh makes .build/imgproxy-venv)"),
       .serialized, .timeLimit(.minutes(3)))
struct ServerImgproxyDialectTests {
    private func start(prefix: String = "/", signed: Bool = true,
                       _ adjust: @escaping (inout ServerConfiguration) -> Void = { _ in }) async throws -> ServerHarness {
        let server = try await ServerHarness.start { configuration, _ in
            configuration.dialects = [DialectMount(name: .imgproxy, prefix: prefix)]
            if signed {
                configuration.imgproxy.keys = [ImgproxyReference.key]
                configuration.imgproxy.salts = [ImgproxyReference.salt]
            }
            adjust(&configuration)
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        server.origin.route("/alpha.png", .image(ServerTestImages.alpha, contentType: "image/png"))
        return server
    }

    /// Each URL's arguments for `ImgProxy`, and the size and type imgproxy answers it with.
    private static var cases: [(arguments: [String: Any], width: Int, height: Int, type: String)] { [
        // The package's default resizing type is auto: fill for a landscape box, fit for a portrait one.
        (["width": 300, "height": 200], 300, 200, "image/jpeg"),
        (["width": 200, "height": 300], 200, 150, "image/jpeg"),
        (["width": 300, "height": 200, "resizing_type": "fit"], 267, 200, "image/jpeg"),
        (["width": 300, "height": 200, "resizing_type": "fill"], 300, 200, "image/jpeg"),
        (["width": 300], 300, 225, "image/jpeg"),
        (["height": 240], 320, 240, "image/jpeg"),
        // Not enlarged: fill crops a small image to at most the box, fill-down keeps the box's
        // aspect ratio, force scales the box into the image.
        (["width": 1000, "height": 800, "resizing_type": "fill"], 640, 480, "image/jpeg"),
        (["width": 1000, "height": 300, "resizing_type": "fill"], 640, 300, "image/jpeg"),
        (["width": 1000, "height": 300, "resizing_type": "fill-down"], 640, 192, "image/jpeg"),
        (["width": 1000, "height": 300, "resizing_type": "force"], 640, 192, "image/jpeg"),
        (["width": 300, "height": 300, "resizing_type": "force"], 300, 300, "image/jpeg"),
        (["width": 1000, "height": 1000, "resizing_type": "fit", "enlarge": true], 1000, 750, "image/jpeg"),
        (["width": 1000, "height": 1000, "resizing_type": "fit"], 640, 480, "image/jpeg"),
        (["width": 300, "height": 200, "extension": "png"], 300, 200, "image/png"),
        (["width": 300, "height": 200, "extension": "webp", "advanced": ["q:60", "bl:2", "sh:0.5"]], 300, 200, "image/webp"),
        (["width": 300, "height": 200, "extension": "gif"], 300, 200, "image/gif"),
        (["width": 300, "height": 200, "resizing_type": "fit", "advanced": ["rot:90"]], 150, 200, "image/jpeg"),
        (["width": 300, "height": 200, "gravity": "nowe", "advanced": ["fl:1:1"]], 300, 200, "image/jpeg"),
        (["width": 300, "height": 200, "gravity": "sm"], 300, 200, "image/jpeg"),
        (["width": 300, "height": 200, "gravity": "fp:0.2:0.8"], 300, 200, "image/jpeg"),
        (["width": 300, "height": 300, "resizing_type": "fit", "advanced": ["ex:1"]], 300, 300, "image/jpeg"),
        (["width": 150, "height": 100, "advanced": ["dpr:2"]], 300, 200, "image/jpeg"),
        // crop first, in pixels or fractions; a fill not enlarged is clamped to the crop, not the image.
        (["width": 100, "height": 100, "advanced": ["c:320:240"]], 100, 100, "image/jpeg"),
        (["width": 1000, "height": 1000, "resizing_type": "fit", "advanced": ["c:0.5:0.5:nowe"]], 320, 240, "image/jpeg"),
        (["width": 400, "height": 100, "resizing_type": "fill", "advanced": ["c:320:240:soea"]], 320, 100, "image/jpeg"),
        (["width": 600, "height": 400, "resizing_type": "fit", "advanced": ["z:0.5"]], 267, 200, "image/jpeg"),
        (["width": 300, "height": 200, "advanced": ["bg:ff0000", "cb:v2", "exp:4102444800", "sm:1", "scp:1", "ar:1"]], 300, 200, "image/jpeg"),
        // The options after the preset win (the package puts its own last).
        (["width": 300, "height": 200, "advanced": ["pr:thumb"]], 300, 200, "image/webp"),
    ] }

    @Test func everySignedAndUnsignedURLAnswersWithImgproxysSizeAndFormat() async throws {
        let server = try await start { $0.imgproxy.presets = ["thumb=rs:fill:100:100/f:webp"] }
        let image = server.origin.url("/photo.jpg").absoluteString
        var arguments = Self.cases.map { $0.arguments.merging(["image_url": image]) { _, new in new } }
        // The same URLs with plain sources, then unsigned (refused here: this server has a key).
        arguments += Self.cases.map { $0.arguments.merging(["image_url": image, "plain": true]) { _, new in new } }
        let urls = try await ImgproxyReference.urls(arguments)
        for (index, url) in urls.enumerated() {
            let expected = Self.cases[index % Self.cases.count]
            let reply = try await ServerTestClient.send(port: server.port, url)
            try ServerTestImages.expectImage(reply, url: url, type: expected.type, width: expected.width, height: expected.height,
                                             reference: "imgproxy")
        }
        let unsigned = try await ImgproxyReference.urls([["image_url": image, "width": 30, "height": 20, "signed": false]])
        #expect(unsigned[0].hasPrefix("/insecure/"))
        #expect(try await ServerTestClient.send(port: server.port, unsigned[0]).status == 403)
        try await server.stop()
    }

    @Test func unsignedURLsAreServedWithoutAKey() async throws {
        let server = try await start(signed: false)
        let photo = server.origin.url("/photo.jpg").absoluteString, alpha = server.origin.url("/alpha.png").absoluteString
        let urls = try await ImgproxyReference.urls([
            ["image_url": photo, "width": 300, "height": 200, "signed": false],
            ["image_url": photo, "width": 300, "height": 200, "signed": false, "plain": true, "extension": "png"],
            // Signed URLs too: with no key any signature is accepted, as imgproxy does.
            ["image_url": photo, "width": 300, "height": 200],
            // The source's format when the URL names none, whatever Accept says.
            ["image_url": alpha, "width": 32, "height": 32, "signed": false],
        ])
        for url in urls {
            let reply = try await ServerTestClient.send(port: server.port, url, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(reply.status == 200, "\(url): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        let alphaReply = try await ServerTestClient.send(port: server.port, urls[3], headers: [("Accept", "image/webp,*/*")])
        #expect(alphaReply.header("Content-Type") == "image/png")
        #expect(try await ServerTestClient.send(port: server.port, urls[0], headers: [("Accept", "image/webp")]).header("Content-Type") == "image/jpeg")
        try await server.stop()
    }

    @Test func oneChangedCharacterIs403() async throws {
        let server = try await start()
        let image = server.origin.url("/photo.jpg").absoluteString
        let urls = try await ImgproxyReference.urls([["image_url": image, "width": 300, "height": 200, "extension": "png"],
                                                     ["image_url": image, "width": 300, "height": 200, "plain": true]])
        for url in urls {
            #expect(try await ServerTestClient.send(port: server.port, url).status == 200, "\(url)")
            let characters = Array(url)
            // The signature's last character carries 2 bits of padding besides its 4 of the HMAC:
            // `a` for `b` changes only those, which imgproxy's decoder ignores as well (any other change is 403).
            let lastOfSignature = characters.dropFirst().firstIndex(of: "/")! - 1
            for position in stride(from: 1, to: characters.count, by: 3) where characters[position] != "/" && position != lastOfSignature {
                var changed = characters
                changed[position] = changed[position] == "a" ? "b" : "a"
                let reply = try await ServerTestClient.send(port: server.port, String(changed))
                #expect(reply.status == 403, "\(String(changed)): \(reply.status)")
            }
        }
        try await server.stop()
    }

    @Test func headersAndRefusalsAnswerAsImgproxy() async throws {
        let server = try await start(signed: false) { configuration in
            configuration.allowedSourcePrefixes = ["http://127.0.0.1:1/"]
        }
        let refused = try await ServerTestClient.send(port: server.port, "/insecure/w:30/plain/\(server.origin.url("/photo.jpg").absoluteString)")
        #expect(refused.status == 404, "a source off IMGPROXY_ALLOWED_SOURCES: \(refused.status)")
        try await server.stop()
        let open = try await start(signed: false)
        let photo = open.origin.url("/photo.jpg").absoluteString
        let attachment = try await ServerTestClient.send(port: open.port, "/insecure/fn:cat/att:1/w:30/plain/\(photo)@webp")
        #expect(attachment.status == 200 && attachment.header("Content-Disposition") == "attachment; filename=\"cat.webp\"")
        #expect(attachment.header("Cache-Control")?.contains("max-age") == true)
        #expect(try await ServerTestClient.send(port: open.port, "/insecure/w:30/plain/\(open.origin.url("/missing.jpg").absoluteString)").status == 404)
        open.origin.route("/text", .image(Data("not an image".utf8), contentType: "image/jpeg"))
        #expect(try await ServerTestClient.send(port: open.port, "/insecure/w:30/plain/\(open.origin.url("/text").absoluteString)").status == 422)
        // Nothing negotiated without IMGPROXY_ENFORCE_*: the answer does not vary by Accept.
        let kept = try await ServerTestClient.send(port: open.port, "/insecure/w:30/plain/\(photo)", headers: [("Accept", "image/webp")])
        #expect(kept.status == 200 && kept.header("Content-Type") == "image/jpeg" && kept.header("Vary") == nil)
        // trim: the white frame around the framed PNG's 300×200 picture at (40, 60) cut away;
        // equal cuts make the left one as the right (60) and the bottom one as the top (40 then).
        open.origin.route("/framed.png", .image(ServerTestImages.framed, contentType: "image/png"))
        let framed = open.origin.url("/framed.png").absoluteString
        for (options, width, height) in [("t:10", 300, 200), ("t:10:ffffff:1:1", 320, 220), ("t:10/rs:fit:150:150", 150, 100),
                                         ("t:10:000000", 400, 300), ("pix:16", 400, 300), ("t:10/pix:1000", 300, 200)] {
            let reply = try await ServerTestClient.send(port: open.port, "/insecure/\(options)/plain/\(framed)@png")
            let image = try ServerTestImages.decode(reply.body)
            #expect(reply.status == 200 && image.width == width && image.height == height, "\(options): \(image.width)×\(image.height)")
        }
        // imgproxy trims the source as stored, before turning it: the same picture stored turned
        // (EXIF 6) has its equal horizontal cuts on what is shown as its top and bottom.
        open.origin.route("/turned.png", .image(ServerTestImages.framedStoredTurned, contentType: "image/png"))
        let turned = open.origin.url("/turned.png").absoluteString
        for (options, width, height) in [("t:10", 300, 200), ("t:10:ffffff:1:0", 300, 220), ("t:10:ffffff:0:1", 320, 200)] {
            let reply = try await ServerTestClient.send(port: open.port, "/insecure/\(options)/plain/\(turned)@png")
            let image = try ServerTestImages.decode(reply.body)
            #expect(reply.status == 200 && image.width == width && image.height == height, "turned \(options): \(image.width)×\(image.height)")
        }
        #expect(try await ServerTestClient.send(port: open.port, "/insecure/nope:1/plain/\(photo)").status == 404)
        #expect(try await ServerTestClient.send(port: open.port, "/insecure/exp:1000/plain/\(photo)").status == 404)
        // The service's own routes beside the dialect at /.
        #expect(try await ServerTestClient.send(port: open.port, "/healthz").status == 200)
        try await open.stop()
    }

    /// imgproxy's `padding`: the image at (left, top) on a canvas that much larger, filled with
    /// `background` or transparent.
    @Test func paddingEnlargesTheResult() async throws {
        let server = try await start(signed: false)
        let photo = server.origin.url("/photo.jpg").absoluteString
        let clear = try await ServerTestClient.send(port: server.port, "/insecure/rs:fit:100:50/pd:10:20/plain/\(photo)@png")
        let padded = try ServerTestImages.decode(clear.body)
        #expect((padded.width, padded.height) == (107, 70), "67×50 fitted, plus 20+20 and 10+10")
        #expect(padded.bitmap.pixel(x: 5, y: 5)?.a == 0 && padded.bitmap.pixel(x: 50, y: 35)?.a == 255)
        #expect(padded.bitmap.pixel(x: 19, y: 35)?.a == 0 && padded.bitmap.pixel(x: 20, y: 35)?.a == 255)
        let red = try await ServerTestClient.send(port: server.port, "/insecure/rs:fit:100:50/pd:10/bg:ff0000/plain/\(photo)@png")
        let filled = try ServerTestImages.decode(red.body)
        #expect((filled.width, filled.height) == (87, 70))
        #expect(TestImages.rgba(filled.bitmap, 2, 2) == [255, 0, 0, 255])
        try await server.stop()
    }

    /// A padding is counted in the output's pixels before its canvas is allocated.
    @Test func paddingCountsTowardsTheResultLimit() async throws {
        let server = try await start(signed: false) { $0.maxResultPixels = 1_000_000 }
        let photo = server.origin.url("/photo.jpg").absoluteString
        let padded = try await ServerTestClient.send(port: server.port, "/insecure/rs:fit:100:50/pd:4000/plain/\(photo)@png")
        #expect(padded.status == 422 && padded.errorCode == "resultTooLarge", "\(padded.status)")
        try await server.stop()
    }

    @Test func enforcedWebPVariesByAccept() async throws {
        let server = try await start(signed: false) { $0.imgproxy.enforceWebP = true }
        let photo = server.origin.url("/photo.jpg").absoluteString
        let webp = try await ServerTestClient.send(port: server.port, "/insecure/w:30/plain/\(photo)", headers: [("Accept", "image/webp")])
        #expect(webp.header("Content-Type") == "image/webp" && webp.header("Vary") == "Accept")
        try await server.stop()
    }

    @Test func mountedAtAPrefix() async throws {
        let server = try await start(prefix: "/imgproxy")
        let image = server.origin.url("/photo.jpg").absoluteString
        let url = try await ImgproxyReference.urls([["image_url": image, "width": 300, "height": 200]])[0]
        let reply = try await ServerTestClient.send(port: server.port, "/imgproxy" + url)
        #expect(reply.status == 200, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        let decoded = try ServerTestImages.decode(reply.body)
        #expect(decoded.width == 300 && decoded.height == 200)
        // Not below the prefix: no dialect answers.
        #expect(try await ServerTestClient.send(port: server.port, url).status == 404)
        #expect(try await ServerTestClient.send(port: server.port, "/image?url=\(image)&w=10").status == 200)
        try await server.stop()
    }
}
