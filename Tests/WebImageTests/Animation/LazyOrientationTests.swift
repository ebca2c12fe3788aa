import Foundation
import Testing
@testable import WebImage

/// ``DecodeOptions/applyOrientation`` on lazily decoded animations: each frame is turned as the
/// whole decode turns it, and without the option the orientation is reported as the whole decode
/// reports it.
@Suite("Lazy animation orientation", .serialized, .timeLimit(.minutes(2)))
struct LazyOrientationTests {
    /// `webp` (an extended file with a VP8X chunk) with an EXIF chunk whose orientation is `value`.
    static func withEXIFOrientation(_ webp: Data, _ value: UInt8) -> Data {
        var bytes = [UInt8](webp)
        bytes[20] |= 0x08 // VP8X: the file has EXIF.
        let tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1,
                                                0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, value, 0, 0,
                                                0, 0, 0, 0]
        bytes += Array("EXIF".utf8) + [UInt8(tiff.count), 0, 0, 0] + tiff
        let size = bytes.count - 8
        bytes.replaceSubrange(4..<8, with: (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) })
        return Data(bytes)
    }

    @Test(arguments: [ImageOrientation.right, .down, .leftMirrored, .upMirrored])
    func webPFramesTurnAsTheWholeDecode(_ orientation: ImageOrientation) throws {
        let data = Self.withEXIFOrientation(try AnimationSamples.flaggedWebP(), UInt8(orientation.rawValue))
        let reported = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(reported.orientation == orientation, "the sample carries the orientation")
        for options in [DecodeOptions(applyOrientation: true), DecodeOptions(maxPixelSize: 20, applyOrientation: true)] {
            let whole = try ImageCodersManager.shared.decode(data, options: options)
            #expect(whole.orientation == .up)
            let animation = try #require(try AnimatedImage(data: data, options: options))
            #expect(animation.frameSize == (whole.width, whole.height))
            for index in [5, 2, 7, 0, 1, 3, 4, 6] {
                #expect(try animation.frame(at: index).bitmap.canonicalSHA256() == whole.frames[index].bitmap.canonicalSHA256(),
                        "\(orientation) frame \(index), thumbnail \(options.maxPixelSize ?? 0)")
            }
            let lazy = try ImageCodersManager.shared.decodeForDisplay(data, options: options)
            #expect(lazy.animation != nil && lazy.orientation == .up)
            #expect(lazy.bitmap.canonicalSHA256() == whole.frames[0].bitmap.canonicalSHA256())
            #expect(try lazy.materialized().frames.map { $0.bitmap.canonicalSHA256() } == whole.frames.map { $0.bitmap.canonicalSHA256() })
        }
        // Without the option the frames stay as stored and the orientation is reported.
        let lazy = try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions())
        #expect(lazy.animation != nil && lazy.orientation == orientation)
        #expect(try lazy.animation?.frame(at: 4).bitmap.canonicalSHA256() == reported.frames[4].bitmap.canonicalSHA256())
        #expect(try lazy.materialized().orientation == orientation)
    }

    @Test func aPlayerShowsTurnedFrames() async throws {
        let data = Self.withEXIFOrientation(try AnimationSamples.flaggedWebP(), UInt8(ImageOrientation.left.rawValue))
        let options = DecodeOptions(applyOrientation: true)
        let whole = try ImageCodersManager.shared.decode(data, options: options)
        let player = try AnimatedImagePlayer(animation: try #require(try AnimatedImage(data: data, options: options)),
                                             clock: ManualAnimationClock())
        for index in [6, 2, 7] {
            player.seek(toFrame: index)
            await player.waitUntilPrefetched()
            #expect(player.currentFrame?.bitmap.canonicalSHA256() == whole.frames[index].bitmap.canonicalSHA256())
        }
    }

    /// An AVIF sequence with `irot` (a quarter turn anticlockwise) written by `avifenc`.
    @Test(.enabled(if: CodecTool.avifenc.isAvailable, CodecTool.avifenc.absentReason))
    func avifIrotTurnsFramesAsTheWholeDecode() throws {
        let directory = try TemporaryDirectory()
        var arguments = ["-s", "10", "--irot", "1"]
        for (index, frame) in try SequenceAnimationTests.frames(count: 5).enumerated() {
            let url = directory.url.appendingPathComponent("frame\(index).png")
            try PNGCoder.encodeBitmap(frame.bitmap, keepAlpha: true).write(to: url)
            arguments.append(url.path)
        }
        let output = directory.url.appendingPathComponent("irot.avif")
        try CodecTool.avifenc.run(arguments + [output.path])
        let data = try Data(contentsOf: output)
        #expect(try ImageCodersManager.shared.decode(data, options: DecodeOptions()).orientation == .left)
        let options = DecodeOptions(applyOrientation: true)
        let whole = try ImageCodersManager.shared.decode(data, options: options)
        #expect((whole.width, whole.height) == (48, 64))
        let animation = try #require(try AnimatedImage(data: data, options: options))
        for index in [3, 0, 4, 1, 2] {
            #expect(try animation.frame(at: index).bitmap.canonicalSHA256() == whole.frames[index].bitmap.canonicalSHA256(), "frame \(index)")
        }
    }
}
