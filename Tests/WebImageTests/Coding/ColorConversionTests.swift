import Foundation
import Testing
@testable import WebImage

/// Colour management against Pillow's `ImageCms.profileToProfile` (lcms2 too) to sRGB: on images
/// the tests make with an embedded Adobe RGB (Debian's icc-profiles-free) or Display P3 profile
/// (made by ``ColorProfileBuilder``), and on the corpus files that carry a profile (one of them a
/// YCCK JPEG with a CMYK profile). Tolerance: 1 per channel (lcms2's rounding may differ by one
/// between its optimised pipelines), at pixels that are not fully transparent.
@Suite struct ColorConversionTests {
    /// A made profile's bytes depend on its colour space alone: lcms2 stamped the build time into
    /// the header, so the same space built a second apart compared unequal (a CI run of the JXL
    /// sequence test failed on it) and missed the transform cache.
    @Test func madeProfilesCarryAFixedDateNotTheBuildTime() throws {
        let profile = try #require(ColorProfileBuilder.rgbProfile(primaries: .displayP3, transfer: .sRGB))
        #expect(Array(profile[24..<36]) == ColorProfileBuilder.fixedCreationDate)
        #expect(ColorProfileBuilder.rgbProfile(primaries: .displayP3, transfer: .sRGB) == profile)
    }

    static let adobeRGBPath = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"
    static let sRGBPath = "/usr/share/color/icc/sRGB.icc"
    static var hasProfiles: Bool { FileManager.default.fileExists(atPath: adobeRGBPath) }
    static let noProfiles: Comment = "Debian's icc-profiles-free is not installed (scripts/install-deps.sh)"

    static var displayP3: Data { ColorProfileBuilder.rgbProfile(primaries: .displayP3, transfer: .sRGB)! }

    /// A saturated gradient with some transparency, so out-of-sRGB colours get clipped or mapped.
    static func gradient(width: Int = 64, height: Int = 48, alpha: Bool = false) throws -> Bitmap {
        try Bitmap(width: width, height: height) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let index = (y * width + x) * 4
                    buffer[index] = UInt8(x * 255 / (width - 1))
                    buffer[index + 1] = UInt8(y * 255 / (height - 1))
                    buffer[index + 2] = UInt8((x + y) * 255 / (width + height - 2))
                    buffer[index + 3] = alpha ? UInt8(255 - (x * 200 / width)) : 255
                }
            }
        }
    }

    /// Pillow's decode of `data` converted from its embedded profile to sRGB with ImageCms
    /// (perceptual when the profile has it, else relative colorimetric, as the library does).
    static func pillowConverted(_ data: Data) throws -> PillowOracle.Image? {
        let script = """
            import io, sys
            from PIL import Image, ImageCms
            im = Image.open(sys.argv[1])
            src = ImageCms.ImageCmsProfile(io.BytesIO(im.info["icc_profile"]))
            dst = ImageCms.createProfile("sRGB")
            intent = 0 if ImageCms.isIntentSupported(src, 0, ImageCms.DIRECTION_INPUT) else 1
            if im.mode == "CMYK":
                out = ImageCms.profileToProfile(im, src, dst, renderingIntent=intent, outputMode="RGB")
            else:
                mode = "RGBA" if im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info else "RGB"
                out = ImageCms.profileToProfile(im.convert(mode), src, dst, renderingIntent=intent, outputMode=mode)
            out = out.convert("RGBA")
            sys.stdout.buffer.write(b"OK %d %d\\n" % out.size + out.tobytes())
            """
        return try PillowOracle.runScript(script, data: data)
    }

    /// The largest channel difference at pixels that are not fully transparent in both.
    static func maxDifference(_ bitmap: Bitmap, _ oracle: PillowOracle.Image) -> Int {
        guard bitmap.width == oracle.width, bitmap.height == oracle.height else { return .max }
        return bitmap.withUnsafeBytes { bytes in
            var worst = 0
            var index = 0
            while index + 3 < bytes.count {
                if bytes[index + 3] != 0 || oracle.rgba[index + 3] != 0 {
                    for channel in 0..<4 { worst = max(worst, abs(Int(bytes[index + channel]) - Int(oracle.rgba[index + channel]))) }
                }
                index += 4
            }
            return worst
        }
    }

    static func encoded(_ format: ImageFormat, profile: Data, alpha: Bool = false) throws -> (Data, Bitmap) {
        let bitmap = try gradient(alpha: alpha)
        var image = DecodedImage(bitmap: bitmap, format: format, hasAlpha: alpha)
        image.iccProfile = profile
        let options = EncodeOptions(quality: 0.95, lossless: true)
        return (try ImageCodersManager.shared.encode(image, format: format, options: options), bitmap)
    }

    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, noProfiles),
          arguments: [ImageFormat.png, .jpeg, .webp], ["adobe", "p3"])
    func convertsEmbeddedProfilesLikeImageCms(_ format: ImageFormat, _ space: String) throws {
        let profile = space == "p3" ? Self.displayP3 : try Data(contentsOf: URL(fileURLWithPath: Self.adobeRGBPath))
        let (data, source) = try Self.encoded(format, profile: profile, alpha: format != .jpeg)
        let converted = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let kept = try ImageCodersManager.shared.decode(data, options: DecodeOptions(keepsColors: true))
        let oracle = try #require(try Self.pillowConverted(data))
        #expect(Self.maxDifference(converted.bitmap, oracle) <= 1, "\(format) \(space)")
        #expect(converted.iccProfile == nil)
        // Kept: today's plain decode, the profile carried along; and a real change when converted.
        #expect(kept.iccProfile == profile)
        #expect(Self.maxDifference(kept.bitmap, try #require(try PillowOracle.decode(data))) <= 1)
        #expect(Self.maxDifference(converted.bitmap, try #require(try PillowOracle.decode(data))) > 8)
        if format != .jpeg {
            #expect(kept.bitmap.canonicalRGBA() == source.canonicalRGBA(), "lossless formats keep the pixels exactly")
        }
    }

    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: Corpus.isAvailable, Corpus.absentReason),
          arguments: Corpus.names { _, entry in
              (entry.flags ?? []).contains("icc_profile") && ["JPEG", "PNG", "MPO"].contains(entry.format ?? "") })
    func corpusFilesWithAProfileConvertLikeImageCms(_ name: String) throws {
        let data = try Corpus.data(name)
        let image = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let oracle = try #require(try Self.pillowConverted(data))
        #expect(Self.maxDifference(image.bitmap, oracle) <= 1, "\(name)")
    }

    @Test(.enabled(if: hasProfiles, noProfiles))
    func anSRGBProfileCostsNoConversion() throws {
        let profile = try Data(contentsOf: URL(fileURLWithPath: Self.sRGBPath))
        #expect(!ColorConversion.needsConversion(iccProfile: profile))
        #expect(ColorConversion.needsConversion(iccProfile: Self.displayP3))
        let (data, source) = try Self.encoded(.png, profile: profile)
        let image = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(image.bitmap.canonicalRGBA() == source.canonicalRGBA())
    }

    @Test func pngGammaWithoutAProfileIsAppliedAsBrowsersDo() throws {
        // gAMA 1.0 (linear samples): each value v becomes sRGB's encoding of v / 255.
        let source = try Self.gradient()
        let plain = try PNGCoder.encodeBitmap(source, keepAlpha: false)
        var chunk = Data("gAMA".utf8) + [0x00, 0x01, 0x86, 0xA0] // 100000 = gamma 1.0
        let crc = CRC32.checksum(chunk)
        chunk = Data([0, 0, 0, 4]) + chunk + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        let withGamma = plain.prefix(33) + chunk + plain.dropFirst(33)
        let image = try PNGCoder().decode(Data(withGamma), options: DecodeOptions())
        let kept = try PNGCoder().decode(Data(withGamma), options: DecodeOptions(keepsColors: true))
        #expect(kept.bitmap.canonicalRGBA() == source.canonicalRGBA())
        var worst = 0
        source.withUnsafeBytes { original in
            image.bitmap.withUnsafeBytes { converted in
                for index in 0..<original.count where index % 4 != 3 {
                    let linear = Double(original[index]) / 255
                    let encoded = linear <= 0.0031308 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
                    worst = max(worst, abs(Int(converted[index]) - Int((encoded * 255).rounded())))
                }
            }
        }
        #expect(worst <= 2)
    }

    @Test func jpegProfilesSplitOverSeveralSegmentsRoundTrip() throws {
        var profile = Data(count: JPEGICCProfile.bytesPerSegment * 2 + 1000)
        for index in profile.indices { profile[index] = UInt8(truncatingIfNeeded: index * 7) }
        let jpeg = try JPEGCoder().encode(DecodedImage(bitmap: try Self.gradient(), hasAlpha: false), format: .jpeg, options: EncodeOptions())
        let embedded = JPEGICCProfile.embedding(profile, in: jpeg)
        #expect(JPEGICCProfile.read(embedded) == profile)
        // A missing segment means no profile, and the image still decodes.
        let segmentLength = 4 + 14 + JPEGICCProfile.bytesPerSegment
        let broken = embedded.prefix(2) + embedded.dropFirst(2 + segmentLength)
        #expect(JPEGICCProfile.read(Data(broken)) == nil)
        #expect(throws: Never.self) { try JPEGCoder().decode(Data(broken), options: DecodeOptions()) }
    }

    @Test(.enabled(if: hasProfiles, noProfiles))
    func decodeCommandKeepsColorsOnRequest() async throws {
        let (data, source) = try Self.encoded(.png, profile: try Data(contentsOf: URL(fileURLWithPath: Self.adobeRGBPath)))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("adobe-\(UUID().uuidString).png")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let kept = try await runCLI(["decode", "--json", "--keep-colors", file.path]).json()
        let converted = try await runCLI(["decode", "--json", file.path]).json()
        #expect(kept["rgbaSHA256"] as? String == source.canonicalSHA256())
        #expect(converted["rgbaSHA256"] as? String != source.canonicalSHA256())
    }

    @Test func hostileProfilesAreIgnored() throws {
        var garbage = Data(repeating: 0xAB, count: 4096)
        garbage.replaceSubrange(16..<20, with: Data("RGB ".utf8))
        let (data, source) = try Self.encoded(.png, profile: garbage)
        let image = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(image.bitmap.canonicalRGBA() == source.canonicalRGBA())
    }
}
