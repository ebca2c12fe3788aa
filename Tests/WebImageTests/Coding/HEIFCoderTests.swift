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

    /// AV1 in a HEIF container without AVIF's brands is detected as HEIF. It must not reach
    /// libheif's dav1d plugin (which leaks on broken streams, found by the fuzzer): a typed
    /// `unsupportedFormat`, whether or not a thumbnail is asked for. libheif 1.15 decodes it
    /// when the coder does not name the HEVC decoder.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func av1InHEIFIsRefusedNotDecodedWithDav1d() throws {
        var data = try Corpus.data("other/libavif/colors_sdr_srgb.avif")
        // The ftyp box's brands (major at 8, compatible from 16): "avif" becomes "mif1"/"miaf".
        let ftypSize = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
        for offset in stride(from: 8, to: ftypSize, by: 4) where data[offset..<offset + 4].elementsEqual("avif".utf8) {
            data.replaceSubrange(offset..<offset + 4, with: Array((offset == 8 ? "mif1" : "miaf").utf8))
        }
        // DecodeFuzzer's leak (40-byte dav1d allocations left at exit): this damaged location
        // table makes libheif send dav1d an empty buffer, which dav1d refuses, and libheif never
        // releases it (reproduced with libheif alone under AddressSanitizer).
        var empty = try Corpus.data("other/libavif/color_grid_alpha_nogrid.avif")
        let emptyFtypSize = Int(empty[3])
        for offset in stride(from: 8, to: emptyFtypSize, by: 4) where empty[offset..<offset + 4].elementsEqual("avif".utf8) {
            empty.replaceSubrange(offset..<offset + 4, with: Array((offset == 8 ? "mif1" : "miaf").utf8))
        }
        empty[172] = 1
        empty[175] = 0
        #expect(ImageFormat.detect(data) == .heic && ImageFormat.detect(empty) == .heic)
        for options in [DecodeOptions(), DecodeOptions(maxPixelSize: 8)] {
            #expect {
                try ImageCodersManager.shared.decode(empty, options: options)
            } throws: { error in
                guard case .unsupportedFormat = error as? WebImageError else { return false }
                return true
            }
            #expect {
                try ImageCodersManager.shared.decode(data, options: options)
            } throws: { error in
                guard case .unsupportedFormat = error as? WebImageError else { return false }
                return true
            }
        }
    }

    /// The property walker on the corpus' real HEIF files (HEVC, no `av1C`) and on hostile box
    /// sizes: zero (to the end), 1 with a 64-bit size past the end, sizes under the header,
    /// nesting that runs out: no crash, no read past the bytes, the boxes that fit.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func itemPropertiesAreReadFromTheBoxesThatFit() throws {
        for name in Self.heifConvertFiles + ["other/kingfisher/gradient-10b-srgb-opaque.heic"] {
            let types = try Corpus.data(name).withUnsafeBytes { HEIFItemProperties.propertyTypes($0) }
            #expect(types.contains("hvcC") && !types.contains("av1C"), "\(name)")
        }
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = payload.count + 8
            return [UInt8(size >> 24), UInt8(size >> 16 & 255), UInt8(size >> 8 & 255), UInt8(size & 255)] + Array(type.utf8) + payload
        }
        let ipco = box("ipco", box("av1C", [1, 2, 3, 4]) + box("ispe", [0, 0, 0, 0]))
        let good = box("ftyp", Array("mif1\0\0\0\0".utf8)) + box("meta", [0, 0, 0, 0] + box("iprp", ipco))
        #expect(good.withUnsafeBytes { HEIFItemProperties.hasAV1Items($0) })
        var hostile: [[UInt8]] = []
        for cut in 1..<good.count { hostile.append(Array(good.prefix(cut))) }
        hostile.append([0, 0, 0, 1] + Array("meta".utf8) + [255, 255, 255, 255, 255, 255, 255, 255])
        hostile.append([0, 0, 0, 0] + Array("meta".utf8) + [0, 0, 0, 0, 0, 0, 0, 3] + Array("iprp".utf8))
        hostile.append([0, 0, 0, 4] + Array("meta".utf8) + good)
        hostile.append([255, 255, 255, 255] + Array("meta".utf8) + good)
        for bytes in hostile {
            let boxes = bytes.withUnsafeBytes { HEIFItemProperties.boxes(in: 0..<$0.count, of: $0) }
            #expect(boxes.allSatisfy { $0.payload.upperBound <= bytes.count })
            _ = bytes.withUnsafeBytes { HEIFItemProperties.hasAV1Items($0) }
        }
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

    /// A thumbnail of at most half the size is made from the YCbCr planes (``HEIFHalfSizeDecode``):
    /// at exactly half size, under each matrix and range `heif-enc` writes, every pixel is the
    /// 2×2 average of libheif's own full-size RGB within rounding (odd sizes repeat the last
    /// row and column); a 4:4:4 file, whose chroma libheif subsamples for that path, stays near it.
    /// (Resampled from the full-size RGB, as before, the same thumbnail is up to 170 levels off
    /// the average at the blue channel's sharp wrap, 1.7 levels on average.)
    @Test(.enabled(if: CodecTool.heifEnc.isAvailable, CodecTool.heifEnc.absentReason),
          arguments: [[], ["--matrix_coefficients", "1", "--full_range_flag", "0"], ["--matrix_coefficients", "9"], ["-p", "chroma=444"]])
    func halfSizeThumbnailsAverageLibheifsRGB(_ encoderOptions: [String]) throws {
        let directory = try TemporaryDirectory()
        let png = directory.url.appendingPathComponent("in.png"), heic = directory.url.appendingPathComponent("out.heic")
        let (width, height) = (321, 241)
        let bitmap = try PixelDifference.gradient(width: width, height: height, alpha: false)
        try PNGCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .png, options: EncodeOptions()).write(to: png)
        try CodecTool.heifEnc.run(["-q", "90", "--no-thumb"] + encoderOptions + ["-o", heic.path, png.path])
        let data = try Data(contentsOf: heic)
        let full = try HEIFCoder().decode(data, options: DecodeOptions())
        let half = try HEIFCoder().decode(data, options: DecodeOptions(maxPixelSize: 161))
        try #require(full.width == width && full.height == height && half.width == 161 && half.height == 121)
        var (worst, total) = (0, 0)
        full.bitmap.withUnsafeBytes { whole in
            half.bitmap.withUnsafeBytes { small in
                for y in 0..<121 {
                    for x in 0..<161 {
                        for channel in 0..<3 {
                            let rows = [2 * y, min(height - 1, 2 * y + 1)], columns = [2 * x, min(width - 1, 2 * x + 1)]
                            let sum = rows.reduce(0) { sum, row in columns.reduce(sum) { $0 + Int(whole[(row * width + $1) * 4 + channel]) } }
                            let difference = abs(Int(small[(y * 161 + x) * 4 + channel]) * 4 - sum)
                            (worst, total) = (max(worst, difference), total + difference)
                        }
                    }
                }
            }
        }
        if encoderOptions.contains("chroma=444") {
            // libheif's 4:2:0 chroma is an average of the 4:4:4 one: near, not exact, at sharp edges.
            #expect(Double(total) / Double(161 * 121 * 3) < 4, "\(encoderOptions): mean \(total) quarter levels")
        } else {
            // In quarters of a level: four rounded samples against one rounded average.
            #expect(worst <= 2 * 4 + 2, "\(encoderOptions): \(worst) quarter levels")
        }
        #expect(!half.bitmap.containsTransparency)
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
