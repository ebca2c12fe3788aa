import Foundation
import Testing
@testable import WebImage

/// JPEG XL through libjxl, compared with Debian's `djxl`/`cjxl` (the same libjxl 0.7) and round
/// trips through our own encoder; Pillow cannot read JPEG XL.
@Suite struct JXLCoderTests {
    /// TestHDR.jxl is coded in XYB: `djxl` rounds its float output to 8 bits on its own path, we
    /// ask libjxl for 8-bit samples. Measured: at most 1 level per channel (mean 0.07).
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason),
          .enabled(if: CodecTool.djxl.isAvailable, CodecTool.djxl.absentReason))
    func corpusFileMatchesDjxlWithinOneLevel() throws {
        let name = "other/sdwebimage/TestHDR.jxl"
        let directory = try TemporaryDirectory()
        let png = directory.url.appendingPathComponent("out.png").path
        try CodecTool.djxl.run([try #require(Corpus.url(name)).path, png])
        // The tools write the decoded pixels as they are, with the file's profile embedded: compare them kept.
        let truth = try PNGCoder().decode(try Data(contentsOf: URL(fileURLWithPath: png)), options: DecodeOptions(keepsColors: true))
        let image = try ImageCodersManager.shared.decode(try Corpus.data(name), options: DecodeOptions(keepsColors: true))
        #expect(image.format == .jxl && image.width == 600 && image.height == 420)
        #expect(try #require(PixelDifference.maximum(image.bitmap, truth.bitmap)) <= 1)
    }

    /// A lossless file from `cjxl` decodes to the PNG it was made from, exactly.
    @Test(.enabled(if: CodecTool.cjxl.isAvailable, CodecTool.cjxl.absentReason))
    func cjxlLosslessDecodesExactly() throws {
        let directory = try TemporaryDirectory()
        let bitmap = try PixelDifference.gradient(width: 70, height: 33, alpha: true)
        let png = directory.url.appendingPathComponent("in.png"), jxl = directory.url.appendingPathComponent("out.jxl")
        try PNGCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .png, options: EncodeOptions()).write(to: png)
        try CodecTool.cjxl.run([png.path, jxl.path, "-d", "0", "-e", "3"])
        let decoded = try ImageCodersManager.shared.decode(try Data(contentsOf: jxl), options: DecodeOptions())
        #expect(decoded.format == .jxl && decoded.hasAlpha)
        #expect(PixelDifference.maximum(decoded.bitmap, bitmap) == 0)
    }

    /// Our lossless file decodes exactly with our decoder and with `djxl`.
    @Test(.enabled(if: CodecTool.djxl.isAvailable, CodecTool.djxl.absentReason))
    func losslessRoundTripIsExact() throws {
        let bitmap = try PixelDifference.gradient(width: 67, height: 45, alpha: true)
        let data = try ImageCodersManager.shared.encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .jxl,
                                                        options: EncodeOptions(lossless: true))
        #expect(ImageFormat.detect(data) == .jxl)
        #expect(PixelDifference.maximum(try JXLCoder().decode(data, options: DecodeOptions()).bitmap, bitmap) == 0)
        let directory = try TemporaryDirectory()
        let jxl = directory.url.appendingPathComponent("in.jxl"), png = directory.url.appendingPathComponent("out.png")
        try data.write(to: jxl)
        try CodecTool.djxl.run([jxl.path, png.path])
        let truth = try PNGCoder().decode(try Data(contentsOf: png), options: DecodeOptions())
        #expect(PixelDifference.maximum(truth.bitmap, bitmap) == 0)
    }

    /// Lossy at quality 0.9 (distance 1): close on average (the test picture has hard wrap-around
    /// edges where single pixels differ more), not exact; lower quality is smaller.
    @Test func lossyRoundTripIsClose() throws {
        let bitmap = try PixelDifference.gradient(width: 64, height: 64, alpha: false)
        let image = DecodedImage(bitmap: bitmap, hasAlpha: false)
        let data = try JXLCoder().encode(image, format: .jxl, options: EncodeOptions(quality: 0.9))
        let decoded = try JXLCoder().decode(data, options: DecodeOptions())
        #expect(!decoded.hasAlpha)
        let difference = try #require(PixelDifference.mean(decoded.bitmap, bitmap))
        #expect(difference < 2, "mean \(difference) levels")
        let smaller = try JXLCoder().encode(image, format: .jxl, options: EncodeOptions(quality: 0.3))
        #expect(smaller.count < data.count)
        #expect(JXLCoder.distance(quality: 1) < 0.2 && JXLCoder.distance(quality: 0.9) == 1)
    }

    @Test func animationRoundTrip() throws {
        let frames = try (0..<3).map { ImageFrame(bitmap: try PixelDifference.gradient(width: 32, height: 24, alpha: true, seed: $0),
                                                  duration: Double($0 + 1) / 10) }
        let image = try DecodedImage(frames: frames, loopCount: 2, hasAlpha: true)
        let data = try JXLCoder().encode(image, format: .jxl, options: EncodeOptions(lossless: true))
        let decoded = try JXLCoder().decode(data, options: DecodeOptions())
        #expect(decoded.frames.count == 3 && decoded.loopCount == 2)
        #expect(decoded.durations.map { Int(($0 * 1000).rounded()) } == [100, 200, 300])
        for index in 0..<3 { #expect(PixelDifference.maximum(decoded.frames[index].bitmap, frames[index].bitmap) == 0) }
        #expect(try JXLCoder().decode(data, options: DecodeOptions(firstFrameOnly: true)).frames.count == 1)
        #expect(try JXLCoder().decode(data, options: DecodeOptions(animationByteLimit: 32 * 24 * 4 * 2)).frames.count == 2)
        let thumbnail = try JXLCoder().decode(data, options: DecodeOptions(maxPixelSize: 16))
        #expect(thumbnail.frames.allSatisfy { $0.bitmap.width == 16 && $0.bitmap.height == 12 })
    }

    @Test func pixelLimitHoldsFromTheHeader() throws {
        let bitmap = try PixelDifference.gradient(width: 200, height: 100, alpha: false)
        let data = try JXLCoder(encodeEffort: 1).encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .jxl,
                                                        options: EncodeOptions(lossless: true))
        #expect {
            try JXLCoder().decode(data, options: DecodeOptions(pixelLimit: 10_000))
        } throws: { error in
            guard case .tooLarge = error as? WebImageError else { return false }
            return true
        }
        let options = DecodeOptions(pixelLimit: 10_000, scaleDownLargeImages: true)
        let scaled = try JXLCoder().decode(data, options: options)
        #expect(scaled.width == (try options.targetSize(width: 200, height: 100)).width && scaled.width < 200)
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func hostileBytesGetTypedErrors() throws {
        let data = try Corpus.data("other/sdwebimage/TestHDR.jxl")
        expectHostileBytesFail(JXLCoder(), truncating: data, at: [2, 12, 40, 100, 300, data.count / 2, data.count - 1],
                               corrupting: data, from: 200, every: 2999)
        #expect(throws: WebImageError.self) { try JXLCoder().decode(Data([0xFF, 0x0A, 0xFF, 0xFF, 0xFF]), options: DecodeOptions()) }
    }
}
