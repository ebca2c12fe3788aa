#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// An animation kept animated is resized or padded frame by frame and every frame is held until
/// the encoder has them: the memory budget and `--max-source-pixels` count its frames.
@Suite("webimage serve: animations within the budget")
struct ServerAnimationBudgetTests {
    /// A `width` × `height` GIF of `frames` frames, alternating two colours (so none is dropped
    /// as unchanged), 40 ms each.
    static func animatedGIF(width: Int, height: Int, frames: Int) throws -> Data {
        let images = try (0..<frames).map { index in
            ImageFrame(bitmap: try Bitmap(width: width, height: height, filledWith: index % 2 == 0 ? (250, 20, 20, 255) : (20, 20, 250, 255)),
                       duration: 0.04)
        }
        return try ImageCodersManager.shared.encode(try DecodedImage(frames: images, loopCount: 0, hasAlpha: false),
                                                    format: .gif, options: EncodeOptions())
    }

    @Test func aTinyAnimationPaddedLargeIsWeighedByItsFrames() async throws {
        // 150 frames of 1×1 padded to 400×400: 150 × 640 KB held at once, 96 MB, under a 24 MiB
        // render budget; the estimate counted one output frame (0.6 MB) and let it through.
        let server = try await ServerHarness.start { configuration, _ in configuration.memoryBudgetBytes = 32 << 20 }
        server.origin.route("/tiny.gif", .image(try Self.animatedGIF(width: 1, height: 1, frames: 150), contentType: "image/gif"))
        let refused = try await server.get("url=" + server.source("/tiny.gif") + "&fit=pad&w=400&h=400&format=gif")
        #expect(refused.status == 413)
        #expect(refused.errorCode == "sourceTooLarge")
        // Padded small, all 150 frames fit and are kept.
        let small = try await server.get("url=" + server.source("/tiny.gif") + "&fit=pad&w=32&h=32&format=gif")
        #expect(small.status == 200)
        let output = try ServerTestImages.decode(small.body)
        #expect(output.frames.count == 150 && output.width == 32 && output.height == 32)
        // A still of it is one frame.
        #expect(try await server.get("url=" + server.source("/tiny.gif") + "&fit=pad&w=400&h=400&format=png").status == 200)
        try await server.stop()
    }

    @Test func sourcePixelsCountEveryFrameRendered() async throws {
        // 100×100 × 20 frames is 200 000 pixels: over a limit of 100 000 when kept animated, a
        // 10 000-pixel still otherwise.
        let server = try await ServerHarness.start { configuration, _ in configuration.maxSourcePixels = 100_000 }
        server.origin.route("/anim.gif", .image(try Self.animatedGIF(width: 100, height: 100, frames: 20), contentType: "image/gif"))
        let animated = try await server.get("url=" + server.source("/anim.gif") + "&format=gif")
        #expect(animated.status == 413)
        #expect(animated.errorCode == "sourceTooLarge")
        #expect(try await server.get("url=" + server.source("/anim.gif") + "&format=png").status == 200)
        try await server.stop()
    }
}

/// The issue's request against the binary: a 3.5 KB GIF of 150 1×1 frames asked for padded to
/// 1400×1400 under `--memory-budget-mib 64` answered 200 with a peak RSS of 1.24-1.47 GB.
@Suite("webimage serve: a padded animation's peak RSS",
       .enabled(if: ServeInstance.isAvailable, "the webimage binary is not built"),
       .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "no /proc (not Linux)"),
       .timeLimit(.minutes(3)))
struct ServerAnimationPeakMemoryTests {
    @Test func aPaddedAnimationIsRefusedBeforeItTakesMemory() async throws {
        try await refused([], status: 422, code: "resultTooLarge")
        // With the output limit out of the way, the budget refuses it: 150 frames × 1400² is 2.9 GB.
        try await refused(["--max-result-pixels", "1000000000"], status: 413, code: "sourceTooLarge")
    }

    @Test func aPaddedAnimationToWebPStreamsItsFramesWithinTheBudget() async throws {
        // 150 frames × 800² held at once would be 960 MB (413 before frames streamed); the animated
        // WebP encoder takes them one at a time: 200, every frame, within the 48 MiB render budget.
        let (reply, baseline, peak) = try await render(["--max-result-pixels", "1000000000"], "&fit=pad&w=800&h=800&format=webp")
        #expect(reply.status == 200, "\(reply.status) \(reply.errorCode ?? "")")
        let output = try ServerTestImages.decode(reply.body)
        #expect(output.frames.count == 150 && output.width == 800 && output.height == 800)
        #expect(peak - baseline < 64 << 20, "peak \(peak >> 20) MiB over a baseline of \(baseline >> 20) MiB")
    }

    private func refused(_ arguments: [String], status: Int, code: String) async throws {
        let (reply, baseline, peak) = try await render(arguments, "&fit=pad&w=1400&h=1400&format=gif")
        #expect(reply.status == status && reply.errorCode == code, "\(reply.status) \(reply.errorCode ?? "")")
        #expect(peak - baseline < 64 << 20, "peak \(peak >> 20) MiB over a baseline of \(baseline >> 20) MiB")
    }

    /// The 150-frame 1×1 GIF rendered with `options` by the binary under `--memory-budget-mib 64`
    /// and `arguments`: the reply, the RSS before it and the peak RSS after it.
    private func render(_ arguments: [String], _ options: String) async throws -> (HTTPReply, baseline: Int, peak: Int) {
        let origin = try await LoopbackServer.start()
        let gif = try ServerAnimationBudgetTests.animatedGIF(width: 1, height: 1, frames: 150)
        origin.route("/tiny.gif", .image(gif, contentType: "image/gif"))
        origin.route("/warm.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let instance = try await ServeInstance.start(["--allow-private-source", "127.0.0.1:\(origin.port)", "--memory-budget-mib", "64"] + arguments)
        func query(_ path: String, _ options: String) -> String {
            "/image?url=" + (origin.url(path).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") + options
        }
        #expect(try await ServerTestClient.send(port: instance.port, query("/warm.jpg", "&format=jpeg")).status == 200)
        let pid = instance.child.process.processIdentifier
        let baseline = try ServerPeakMemoryTests.status("VmRSS", pid: pid)
        let reply = try await ServerTestClient.send(port: instance.port, query("/tiny.gif", options))
        let peak = try ServerPeakMemoryTests.status("VmHWM", pid: pid)
        await instance.stop()
        try await origin.shutdown()
        print("padded animation \(options): status \(reply.status), baseline \(baseline >> 20) MiB, peak \(peak >> 20) MiB, \(gif.count) source bytes")
        return (reply, baseline, peak)
    }
}
