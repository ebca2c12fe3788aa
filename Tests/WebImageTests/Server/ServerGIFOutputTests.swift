#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `GET /image` keeps animations animated for clients without WebP: `auto` answers them with an
/// animated GIF, and `format=gif` asks for one.
@Suite("webimage serve: GIF output")
struct ServerGIFOutputTests {
    /// Three 40×20 frames of distinct solid colours, 0.1 s each, looping forever.
    static func frames() throws -> [ImageFrame] {
        try (0..<3).map { index in
            ImageFrame(bitmap: try Bitmap(width: 40, height: 20, filledWith: (UInt8(index * 100), 50, 200, 255)), duration: 0.1)
        }
    }

    private func withServer(_ body: (ServerHarness) async throws -> Void) async throws {
        let animation = try DecodedImage(frames: try Self.frames(), loopCount: 0, hasAlpha: false)
        let gif = try ImageCodersManager.shared.encode(animation, format: .gif, options: EncodeOptions())
        let still = try ImageCodersManager.shared.encode(animation, format: .gif, options: EncodeOptions(firstFrameOnly: true))
        let harness = try await ServerHarness.start()
        harness.origin.route("/anim.gif", .image(gif, contentType: "image/gif"))
        harness.origin.route("/still.gif", .image(still, contentType: "image/gif"))
        harness.origin.route("/anim.webp", .image(ServerTestImages.animation, contentType: "image/webp"))
        harness.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        try await withShutdown(of: harness, { try await $0.stop() }, body)
    }

    /// Every frame of `reply` is the source frame's colour, with its delay.
    private func expectAnimatedGIF(_ reply: HTTPReply, width: Int = 40, height: Int = 20, _ comment: Comment) throws {
        #expect(reply.status == 200, comment)
        #expect(reply.header("Content-Type") == "image/gif", comment)
        #expect(ImageFormat.detect(reply.body) == .gif, comment)
        let image = try ServerTestImages.decode(reply.body)
        #expect(image.frames.count == 3 && image.width == width && image.height == height, comment)
        #expect(image.durations == [0.1, 0.1, 0.1], comment)
        #expect(image.loopCount == 0, comment)
        for (index, frame) in image.frames.enumerated() {
            let pixel = try #require(frame.bitmap.pixel(x: width / 2, y: height / 2))
            #expect(pixel.r == UInt8(index * 100) && pixel.g == 50 && pixel.b == 200 && pixel.a == 255, "\(comment) frame \(index)")
        }
    }

    @Test func animatedSourceWithoutWebPGetsAnimatedGIF() async throws {
        try await withServer { server in
            let source = "url=" + server.source("/anim.gif")
            try expectAnimatedGIF(try await server.get(source, headers: [("Accept", "image/png")]), "Accept: image/png")
            try expectAnimatedGIF(try await server.get(source), "no Accept")
            try expectAnimatedGIF(try await server.get(source + "&w=20", headers: [("Accept", "image/avif,image/png")]),
                                  width: 20, height: 10, "AVIF without WebP, resized")
            // An animated WebP source for a client without WebP: GIF too.
            try expectAnimatedGIF(try await server.get("url=" + server.source("/anim.webp"), headers: [("Accept", "*/*")]),
                                  "WebP source")
            // With WebP accepted: animated WebP, as before.
            let webp = try await server.get(source, headers: [("Accept", "image/webp")])
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(try ServerTestImages.decode(webp.body).frames.count == 3)
            // A still GIF source is a still: JPEG for an opaque one.
            let still = try await server.get("url=" + server.source("/still.gif"), headers: [("Accept", "image/png")])
            #expect(still.header("Content-Type") == "image/jpeg")
        }
    }

    @Test func explicitGIFFormat() async throws {
        try await withServer { server in
            try expectAnimatedGIF(try await server.get("url=" + server.source("/anim.webp") + "&format=gif",
                                                       headers: [("Accept", "image/webp")]), "format=gif")
            let photo = try await server.get("url=" + server.source("/photo.jpg") + "&format=gif&w=100")
            #expect(photo.status == 200 && photo.header("Content-Type") == "image/gif")
            #expect(photo.header("Vary") == nil)
            let image = try ServerTestImages.decode(photo.body)
            #expect(image.frames.count == 1 && image.width == 100 && image.height == 75)
            // An animated GIF asked for as PNG is its first frame.
            let png = try await server.get("url=" + server.source("/anim.gif") + "&format=png")
            #expect(png.header("Content-Type") == "image/png")
            #expect(try ServerTestImages.decode(png.body).frames.count == 1)
        }
    }
}
