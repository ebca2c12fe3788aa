import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// `webimage play FILE --json`: the record's exact fields, and a 300-frame 1920×1080 animation
/// played through in bounded memory.
@Suite("Play command", .serialized, .timeLimit(.minutes(3)))
struct PlayCommandTests {
    @Test(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
    func printsTheRecord() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("square.png")
        try AnimationSamples.movingSquareAPNG(width: 120, height: 80, frames: 12, delay: 0.02).write(to: file)
        let run = try await runCLI(["play", file.path, "--json", "--rate", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let record = try run.json()
        #expect(Set(record.keys) == ["frames", "loops", "shown", "skipped", "peakBufferBytes"])
        #expect(record["frames"] as? Int == 12)
        #expect(record["loops"] as? Int == 1, "without --seconds it plays once through")
        let shown = try #require(record["shown"] as? Int), skipped = try #require(record["skipped"] as? Int)
        #expect(shown + skipped == 12 && shown >= 1)
        #expect(record["peakBufferBytes"] as? Int ?? 0 >= 120 * 80 * 4)
        let still = directory.url.appendingPathComponent("still.png")
        try ImageCodersManager.shared.encode(DecodedImage(bitmap: try Bitmap(width: 4, height: 4, filledWith: (1, 2, 3, 255)), hasAlpha: false),
                                             format: .png, options: EncodeOptions()).write(to: still)
        #expect(try await runCLI(["play", still.path, "--json"]).status != 0, "a still image is refused")
    }

    /// `load --json` counts an animation's frames though the load decodes only the first.
    @Test(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
    func loadReportsEveryFrameOfALazyAnimation() async throws {
        let server = try await LoopbackServer.start()
        let directory = try TemporaryDirectory()
        server.route("/a.png", .image(try AnimationSamples.movingSquareAPNG(width: 60, height: 40, frames: 9), contentType: "image/png"))
        let run = try await runCLI(["load", server.url("/a.png").absoluteString, "--cache-dir", directory.url.path, "--json"])
        try await server.shutdown()
        let line = try #require(run.stdout.split(separator: "\n").first.map(String.init))
        let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(record["frames"] as? Int == 9)
    }

    /// 300 frames of 1920×1080 (2.4 GB decoded whole) played frame by frame: the peak resident
    /// memory of the run minus that of playing a small animation stays within 64 MB.
    @Test(.enabled(if: MeasuredRun.canMeasure, "the webimage binary or GNU time is missing"))
    func aFullHDAnimationPlaysInBoundedMemory() async throws {
        let directory = try TemporaryDirectory()
        let large = directory.url.appendingPathComponent("fullhd.png"), small = directory.url.appendingPathComponent("small.png")
        try AnimationSamples.movingSquareAPNG(width: 1920, height: 1080, frames: 300).write(to: large)
        try AnimationSamples.movingSquareAPNG(width: 64, height: 64, frames: 300).write(to: small)
        let arguments = ["--json", "--every-frame", "--rate", "1000", "--buffer-mib", "24"]
        let baseline = try await runMeasured(["play", small.path] + arguments)
        let run = try await runMeasured(["play", large.path] + arguments)
        #expect(run.status == 0 && baseline.status == 0)
        let record = try run.json()
        #expect(record["frames"] as? Int == 300)
        #expect(record["shown"] as? Int == 300, "every frame decoded and shown")
        #expect(record["peakBufferBytes"] as? Int ?? .max <= 24 << 20)
        let growth = run.peakMemoryBytes - baseline.peakMemoryBytes
        #expect(growth <= 64 << 20, "peak RSS grew by \(growth >> 20) MiB")
    }
}
