import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--dialect thumbor` end to end: the URLs libthumbor's `CryptoURL` makes, signed and unsafe,
/// answered by an in-process `ImageServer` from the loopback origin.
@Suite("webimage serve: thumbor's URLs from libthumbor", .enabled(if: ThumborReference.available,
       "thumbor 7.8 and libthumbor are not installed (scripts/test.sh makes .build/thumbor-venv from PyPI)"),
       .serialized, .timeLimit(.minutes(3)))
struct ServerThumborDialectTests {
    private func start(allowUnsafe: Bool = true) async throws -> ServerHarness {
        let server = try await ServerHarness.start { configuration, _ in
            configuration.dialects = [DialectMount(name: .thumbor)]
            configuration.thumborKey = ThumborReference.key
            configuration.thumborAllowUnsafe = allowUnsafe
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        server.origin.route("/alpha.png", .image(ServerTestImages.alpha, contentType: "image/png"))
        return server
    }

    /// Each URL's options for libthumbor, and the size and type thumbor answers it with (the
    /// photo is 640×480).
    private static var cases: [(options: [String: Any], width: Int, height: Int, type: String)] { [
        (["width": 300, "height": 200], 300, 200, "image/jpeg"),
        (["width": 300], 300, 225, "image/jpeg"),
        (["height": 240], 320, 240, "image/jpeg"),
        (["width": 300, "height": 200, "fit_in": true], 267, 200, "image/jpeg"),
        (["width": 300, "height": 200, "full_fit_in": true], 300, 225, "image/jpeg"),
        (["width": 200, "height": 300, "adaptive_fit_in": true], 267, 200, "image/jpeg"),
        (["width": 300, "height": 300, "fit_in": true, "filters": ["fill(white)"]], 300, 300, "image/jpeg"),
        (["width": 1000, "height": 800], 1000, 800, "image/jpeg"),
        (["width": 1000, "height": 1000, "fit_in": true], 640, 480, "image/jpeg"),
        (["width": 1000, "height": 1000, "fit_in": true, "filters": ["upscale()"]], 1000, 750, "image/jpeg"),
        (["width": 1000, "height": 300, "filters": ["no_upscale()"]], 640, 300, "image/jpeg"),
        (["width": 100, "height": 100, "crop": [[0, 0], [320, 240]]], 100, 100, "image/jpeg"),
        (["width": 300, "height": 200, "flip": true, "flop": true, "halign": "left", "valign": "top"], 300, 200, "image/jpeg"),
        (["width": 300, "height": 200, "smart": true], 300, 200, "image/jpeg"),
        (["width": 300, "height": 200, "filters": ["rotate(90)"]], 200, 300, "image/jpeg"),
        (["width": 300, "height": 200, "filters": ["format(png)", "grayscale()"]], 300, 200, "image/png"),
        (["width": 300, "height": 200, "filters": ["format(webp)", "quality(60)", "blur(2)"]], 300, 200, "image/webp"),
        (["width": 120, "filters": ["strip_exif()", "strip_icc()", "focal(500x100:600x200)"]], 120, 90, "image/jpeg"),
    ] }

    @Test func everySignedAndUnsafeURLAnswersWithThumborsSizeAndFormat() async throws {
        let server = try await start()
        let image = server.origin.url("/photo.jpg").absoluteString
        var options = Self.cases.map { $0.options.merging(["image_url": image]) { _, new in new } }
        options += Self.cases.prefix(4).map { $0.options.merging(["image_url": image, "unsafe": true]) { _, new in new } }
        let urls = try await ThumborReference.urls(options)
        for (index, url) in urls.enumerated() {
            let expected = Self.cases[index % Self.cases.count]
            let reply = try await ServerTestClient.send(port: server.port, url)
            try ServerTestImages.expectImage(reply, url: url, type: expected.type, width: expected.width, height: expected.height,
                                             reference: "thumbor")
        }
        // The source percent-encoded, as libthumbor leaves it when the caller encoded it.
        let encoded = try await ThumborReference.urls([["width": 40, "height": 30,
                                                        "image_url": image.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!]])
        let reply = try await ServerTestClient.send(port: server.port, encoded[0])
        #expect(reply.status == 200, "\(encoded[0])")
        try await server.stop()
    }

    @Test func oneChangedCharacterAnswersAsThumbor() async throws {
        let server = try await start(allowUnsafe: false)
        let image = server.origin.url("/photo.jpg").absoluteString
        let url = try await ThumborReference.urls([["width": 300, "height": 200, "image_url": image]])[0]
        #expect(try await ServerTestClient.send(port: server.port, url).status == 200)
        // Every position of the hash and of the signed path, one character changed: thumbor's 400.
        let characters = Array(url)
        for position in stride(from: 1, to: characters.count, by: 3) where characters[position] != "/" {
            var changed = characters
            changed[position] = changed[position] == "a" ? "b" : "a"
            let reply = try await ServerTestClient.send(port: server.port, String(changed))
            #expect(reply.status == 400, "\(String(changed)): \(reply.status)")
        }
        // Unsafe URLs with a key and without --thumbor-allow-unsafe: 400, as thumbor without ALLOW_UNSAFE_URL.
        let unsafe = try await ThumborReference.urls([["width": 300, "height": 200, "image_url": image, "unsafe": true]])[0]
        #expect(try await ServerTestClient.send(port: server.port, unsafe).status == 400)
        try await server.stop()
    }

    @Test func refusedAndMissingSourcesAnswerAsThumbor() async throws {
        let server = try await start()
        let urls = try await ThumborReference.urls([
            ["width": 30, "height": 30, "image_url": server.origin.url("/missing.jpg").absoluteString],
            // A private address off the allow-list: thumbor refuses a source its rules refuse with 400.
            ["width": 30, "height": 30, "image_url": "http://10.0.0.1/a.jpg"],
            ["width": 30, "height": 30, "image_url": server.origin.url("/text").absoluteString],
            // A watermark's image passes the same rules: a private address is refused before any fetch.
            ["width": 30, "height": 30, "image_url": server.origin.url("/photo.jpg").absoluteString,
             "filters": ["watermark(http://10.0.0.1/w.png,0,0,0)"]],
        ])
        server.origin.route("/text", .image(Data("not an image".utf8), contentType: "image/jpeg"))
        #expect(try await ServerTestClient.send(port: server.port, urls[0]).status == 404)
        #expect(try await ServerTestClient.send(port: server.port, urls[1]).status == 400)
        #expect(try await ServerTestClient.send(port: server.port, urls[2]).status == 400)
        let refusedMark = try await ServerTestClient.send(port: server.port, urls[3])
        #expect(refusedMark.status == 400 && refusedMark.errorCode == "sourceNotAllowed", "\(refusedMark.errorCode ?? "-")")
        try await server.stop()
    }
}
