import Foundation
import Testing
@testable import WebImage

/// HEIC/HEIF through libheif, compared pixel for pixel with Debian's `heif-convert` (the same
/// libheif 1.15.1); Pillow cannot read HEIF, so the corpus manifest has no answer for these files.
@Suite struct HEIFCoderTests {
    /// Corpus files `heif-convert` writes as PNG. (gradient-10b-srgb-opaque.heic is not one:
    /// `heif-convert` fails writing its ICC profile to PNG; it is checked in `corpusStills`.)
    static let heifConvertFiles = ["other/kingfisher/gradient-10b-displayp3-alpha.heic", "other/sdwebimage/TestImage.heif"]

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason),
          .enabled(if: CodecTool.heifConvert.isAvailable, CodecTool.heifConvert.absentReason), arguments: heifConvertFiles)
    func matchesHeifConvertPixelForPixel(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let png = directory.url.appendingPathComponent("out.png").path
        try CodecTool.heifConvert.run([try #require(Corpus.url(name)).path, png])
        // The tools write the decoded pixels as they are, with the file's profile embedded: compare them kept.
        let truth = try PNGCoder().decode(try Data(contentsOf: URL(fileURLWithPath: png)), options: DecodeOptions(keepsColors: true))
        let image = try ImageCodersManager.shared.decode(try Corpus.data(name), options: DecodeOptions(keepsColors: true))
        #expect(image.format == .heic && image.orientation == .up)
        #expect(PixelDifference.maximum(image.bitmap, truth.bitmap) == 0)
    }

    /// The other corpus HEIF files: 10-bit opaque, and an image sequence (`msf1`) whose primary
    /// still is decoded (libheif 1.15 reads no tracks; `heif-convert` refuses the brand).
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func corpusStills() throws {
        let opaque = try ImageCodersManager.shared.decode(try Corpus.data("other/kingfisher/gradient-10b-srgb-opaque.heic"), options: DecodeOptions())
        #expect(opaque.width == 64 && opaque.height == 64 && !opaque.hasAlpha && !opaque.bitmap.containsTransparency)
        let alpha = try ImageCodersManager.shared.decode(try Corpus.data("other/kingfisher/gradient-10b-displayp3-alpha.heic"), options: DecodeOptions())
        #expect(alpha.hasAlpha && alpha.bitmap.containsTransparency)
        let sequence = try ImageCodersManager.shared.decode(try Corpus.data("other/sdwebimage/TestImageAnimated.heics"), options: DecodeOptions())
        #expect(sequence.format == .heic && sequence.frames.count == 1 && sequence.width == 256 && sequence.height == 144)
    }

    /// A file from `heif-enc` with a 128-px thumbnail stored without alpha, of an image with
    /// alpha: a 100-px request is served from the (opaque) thumbnail, a 200-px one from the
    /// primary image (transparent pixels), and the full decode matches `heif-convert`.
    @Test(.enabled(if: CodecTool.heifEnc.isAvailable, CodecTool.heifEnc.absentReason),
          .enabled(if: CodecTool.heifConvert.isAvailable, CodecTool.heifConvert.absentReason))
    func embeddedThumbnailServesSmallRequests() throws {
        let directory = try TemporaryDirectory()
        let png = directory.url.appendingPathComponent("in.png"), heic = directory.url.appendingPathComponent("out.heic")
        let bitmap = try PixelDifference.gradient(width: 320, height: 240, alpha: true)
        try PNGCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .png, options: EncodeOptions()).write(to: png)
        try CodecTool.heifEnc.run(["-q", "90", "-t", "128", "--no-thumb-alpha", "-o", heic.path, png.path])
        let data = try Data(contentsOf: heic)
        let small = try HEIFCoder().decode(data, options: DecodeOptions(maxPixelSize: 100))
        #expect(small.width == 100 && small.height == 75 && !small.bitmap.containsTransparency)
        let larger = try HEIFCoder().decode(data, options: DecodeOptions(maxPixelSize: 200))
        #expect(larger.width == 200 && larger.height == 150 && larger.bitmap.containsTransparency)
        let full = try HEIFCoder().decode(data, options: DecodeOptions())
        let out = directory.url.appendingPathComponent("out.png")
        try CodecTool.heifConvert.run([heic.path, out.path])
        let truth = try PNGCoder().decode(try Data(contentsOf: out), options: DecodeOptions())
        #expect(PixelDifference.maximum(full.bitmap, truth.bitmap) == 0)
        let difference = try #require(PixelDifference.mean(full.bitmap, bitmap))
        #expect(difference < 3, "lossy HEVC stays near the source: mean \(difference) levels")
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func pixelLimitHoldsFromTheHeader() throws {
        let data = try Corpus.data("other/sdwebimage/TestImage.heif") // 1440×960
        try expectPixelLimitHolds(HEIFCoder(), data, pixelLimit: 1_000_000)
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func hostileBytesGetTypedErrors() throws {
        let data = try Corpus.data("other/kingfisher/gradient-10b-displayp3-alpha.heic")
        expectHostileBytesFail(HEIFCoder(), truncating: data, at: [12, 40, 100, 300, data.count / 2, data.count - 1],
                               corrupting: try Corpus.data("other/sdwebimage/TestImage.heif"), from: 600, every: 4999)
    }
}
