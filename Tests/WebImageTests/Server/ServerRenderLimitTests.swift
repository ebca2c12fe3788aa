#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--max-animation-frames` and `--max-result-pixels`: imgproxy's limits by their meaning,
/// checked from the header before anything is decoded.
@Suite("webimage serve: render limits")
struct ServerRenderLimitTests {
    @Test func settingsFromFlagsEnvironmentAndFile() async throws {
        let defaults = try await ServerConfiguration.resolve(.init(), environment: [:])
        #expect(defaults.maxAnimationFrames == 500 && defaults.maxResultPixels == 100_000_000)
        #expect(defaults.summary.contains("max-animation-frames: 500") && defaults.summary.contains("max-result-pixels: 100000000"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-serve-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"max-animation-frames": 7, "max-result-pixels": 9000}"#.utf8).write(to: file)
        let fromFile = try await ServerConfiguration.resolve(.init(), environment: [ServerConfiguration.configFileVariable: file.path])
        #expect(fromFile.maxAnimationFrames == 7 && fromFile.maxResultPixels == 9000)
        let fromEnvironment = try await ServerConfiguration.resolve(.init(), environment: [
            ServerConfiguration.configFileVariable: file.path, "WEBIMAGE_MAX_ANIMATION_FRAMES": "8", "WEBIMAGE_MAX_RESULT_PIXELS": "8000"])
        #expect(fromEnvironment.maxAnimationFrames == 8 && fromEnvironment.maxResultPixels == 8000)
        var flags = ServerConfiguration.Flags()
        flags.maxAnimationFrames = 9
        flags.maxResultPixels = 7000
        let fromFlags = try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_MAX_ANIMATION_FRAMES": "8"])
        #expect(fromFlags.maxAnimationFrames == 9 && fromFlags.maxResultPixels == 7000)
        for bad in [(0, 1), (1, 0)] {
            var flags = ServerConfiguration.Flags()
            flags.maxAnimationFrames = bad.0
            flags.maxResultPixels = bad.1
            await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
        }
    }

    @Test func anAnimationIsRenderedAsItsFirstFramesUpToTheLimit() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.maxAnimationFrames = 4 }
        server.origin.route("/anim.gif", .image(try ServerAnimationBudgetTests.animatedGIF(width: 8, height: 8, frames: 10),
                                                contentType: "image/gif"))
        let reply = try await server.get("url=" + server.source("/anim.gif") + "&format=gif")
        #expect(reply.status == 200)
        #expect(try ServerTestImages.decode(reply.body).frames.count == 4)
        try await server.stop()
    }

    @Test func anOutputOverTheResultLimitIs422BeforeAnyDecode() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.maxResultPixels = 50_000 }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        server.origin.route("/anim.gif", .image(try ServerAnimationBudgetTests.animatedGIF(width: 1, height: 1, frames: 20),
                                                contentType: "image/gif"))
        // 300 × 300 padded: 90 000 pixels.
        let padded = try await server.get("url=" + server.source("/photo.jpg") + "&fit=pad&w=300&h=300&format=png")
        #expect(padded.status == 422)
        #expect(padded.errorCode == "resultTooLarge")
        // The 640 × 480 source at its own size: 307 200 pixels.
        #expect(try await server.get("url=" + server.source("/photo.jpg") + "&format=jpeg").errorCode == "resultTooLarge")
        // One side: at most 150 × 200 either way up (the EXIF orientation may turn it): 30 000.
        #expect(try await server.get("url=" + server.source("/photo.jpg") + "&w=150&format=jpeg").status == 200)
        // 20 frames of 64 × 64: 81 920 pixels, each frame alone would pass.
        let frames = try await server.get("url=" + server.source("/anim.gif") + "&fit=pad&w=64&h=64&format=gif")
        #expect(frames.status == 422 && frames.errorCode == "resultTooLarge")
        #expect(try await server.get("url=" + server.source("/anim.gif") + "&fit=pad&w=64&h=64&format=png").status == 200)
        try await server.stop()
    }
}
