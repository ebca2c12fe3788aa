import Foundation
import Testing
import WebImageDemo
@testable import WebImage

/// ``ImageInfo``: what a file says about itself, read without decoding pixels. Checked against
/// Pillow's answers in the corpus manifest, on images made here, on headers whose bitmap could
/// never be allocated, and on hostile bytes.
@Suite("ImageInfo")
struct ImageInfoTests {
    static let coders = ImageCodersManager.shared

    // MARK: Made images

    @Test(arguments: [(ImageFormat.gif, 5), (.webp, 3), (.png, 1), (.gif, 1), (.avif, 3), (.jxl, 3)])
    func animationsReportTheirFrameCount(_ format: ImageFormat, _ count: Int) throws {
        let frames = try (0..<count).map { index in
            ImageFrame(bitmap: try Bitmap(width: 30, height: 20, filledWith: (UInt8(index * 40), 80, 160, 255)), duration: 0.1)
        }
        let data = try Self.coders.encode(try DecodedImage(frames: frames, loopCount: 0, hasAlpha: false),
                                          format: format, options: EncodeOptions(lossless: true))
        let info = try ImageInfo.read(from: data)
        #expect(info == ImageInfo(format: format, width: 30, height: 20, frames: count, bytes: data.count))
    }

    @Test func anEXIFOrientedJPEGReportsItsOrientationAndStoredSize() throws {
        let jpeg = try Self.jpeg(width: 40, height: 20)
        let oriented = Self.withEXIFOrientation(jpeg, 6)
        let info = try ImageInfo.read(from: oriented)
        #expect(info.orientation == .right)
        #expect((info.width, info.height) == (40, 20))
        #expect(try ImageInfo.read(from: Self.withEXIFOrientation(jpeg, 8)).orientation == .left)
        #expect(try ImageInfo.read(from: jpeg).orientation == .up)
    }

    @Test func pngAlphaComesFromTheColourTypeOrATRNSChunk() throws {
        let opaque = try Self.coders.encode(DecodedImage(bitmap: try SampleImages.gradient(width: 16, height: 8), hasAlpha: false),
                                            format: .png, options: EncodeOptions())
        #expect(opaque[opaque.startIndex + 25] == 2, "an opaque image is written as RGB")
        #expect(try ImageInfo.read(from: opaque).hasAlpha == false)
        // tRNS for RGB: the one transparent colour, three 16-bit samples; it goes after IHDR.
        var chunk = Data()
        chunk.appendChunk("tRNS", Data([0, 255, 0, 0, 0, 0]))
        let withTRNS = opaque.prefix(33) + chunk + opaque.dropFirst(33)
        let info = try ImageInfo.read(from: Data(withTRNS))
        #expect(info.hasAlpha)
        #expect((info.width, info.height, info.frames) == (16, 8, 1))
        let rgba = try Self.coders.encode(DecodedImage(bitmap: try SampleImages.quadrants(width: 16, height: 16, transparentCenter: true),
                                                       hasAlpha: true), format: .png, options: EncodeOptions())
        #expect(try ImageInfo.read(from: rgba).hasAlpha)
    }

    @Test func aGIFIsTransparentWhenItsFirstGraphicControlSaysSo() throws {
        let transparent = try Bitmap(width: 8, height: 8, filledWith: (0, 0, 0, 0))
        let gif = try Self.coders.encode(DecodedImage(bitmap: transparent, hasAlpha: true), format: .gif, options: EncodeOptions())
        #expect(try ImageInfo.read(from: gif).hasAlpha)
        let opaque = try Self.coders.encode(DecodedImage(bitmap: try Bitmap(width: 8, height: 8, filledWith: (9, 9, 9, 255)), hasAlpha: false),
                                            format: .gif, options: EncodeOptions())
        #expect(try ImageInfo.read(from: opaque).hasAlpha == false)
    }

    @Test func anEmbeddedProfileIsNamedAndNoneIsNil() throws {
        let profile = ColorProfileBuilder.rgbProfile(primaries: .displayP3, transfer: .sRGB)
        let jpeg = JPEGICCProfile.embedding(try #require(profile), in: try Self.jpeg(width: 8, height: 8))
        // lcms2 names the RGB profiles it builds so (checked with Pillow's ImageCms below, on corpus files).
        #expect(try ImageInfo.read(from: jpeg).colorProfile == "RGB built-in")
        #expect(try ImageInfo.read(from: Self.jpeg(width: 8, height: 8)).colorProfile == nil)
        #expect(ICCProfileDescription.description(of: Data("not a profile".utf8)) == nil)
    }

    @Test func infoIsCodableAsTheServiceAnswersIt() throws {
        let info = ImageInfo(format: .webp, width: 3, height: 2, frames: 4, orientation: .left, hasAlpha: true, bytes: 99,
                             colorProfile: nil)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(info)) as? [String: Any]
        #expect(json?["format"] as? String == "webp" && json?["orientation"] as? Int == 8 && json?["frames"] as? Int == 4)
        #expect(try JSONDecoder().decode(ImageInfo.self, from: JSONEncoder().encode(info)) == info)
    }

    // MARK: No pixels decoded

    /// A PNG of IHDR and IEND only: no image data at all, so any decode fails, yet the header is
    /// all the info needs. At 2³¹ − 1 on a side the bitmap (2⁶⁴ bytes) could not even exist.
    @Test(arguments: [(20_000, 20_000), (Int(Int32.max), Int(Int32.max))])
    func aHeaderOnlyPNGAnswersWithoutABitmap(_ width: Int, _ height: Int) throws {
        let png = Self.headerOnlyPNG(width: width, height: height, colorType: 6)
        let clock = ContinuousClock()
        let start = clock.now
        let info = try ImageInfo.read(from: png)
        let elapsed = clock.now - start
        #expect((info.width, info.height, info.frames, info.hasAlpha) == (width, height, 1, true))
        #expect(elapsed < .seconds(1), "read in \(elapsed): a header must not cost a decode")
        #expect(throws: WebImageError.self) { try Self.coders.decode(png, options: DecodeOptions()) }
    }

    @Test func aJPEGCutShortAfterItsFrameHeaderStillGivesItsSize() throws {
        let jpeg = try Self.jpeg(width: 300, height: 200)
        let sof = try jpeg.withUnsafeBytes { bytes in
            try #require(JPEGMarkerWalker(bytes).first { (0xC0...0xC2).contains($0.marker) }).payload
        }
        let cut = Data(jpeg.prefix(sof.upperBound + 3))
        #expect(throws: WebImageError.self) { try Self.coders.decode(cut, options: DecodeOptions()) }
        let info = try ImageInfo.read(from: cut)
        #expect((info.format, info.width, info.height) == (ImageFormat.jpeg, 300, 200))
        // Cut before the frame header's size: no size yet.
        #expect(throws: WebImageError.truncatedData("JPEG: the data ends inside the frame header")) {
            try ImageInfo.read(from: Data(jpeg.prefix(sof.lowerBound + 3)))
        }
    }

    // MARK: Hostile input

    @Test func noBytesAndUnknownBytesAreTypedErrors() {
        #expect(throws: WebImageError.emptyData) { try ImageInfo.read(from: Data()) }
        #expect(throws: WebImageError.unsupportedFormat("no known image format")) { try ImageInfo.read(from: Data("hello".utf8)) }
        var random = SampleImages.SeededBytes(seed: 32)
        for length in [1, 7, 64, 4096] {
            #expect(throws: WebImageError.self) { try ImageInfo.read(from: random.bytes(length)) }
        }
    }

    @Test func emptyAndAbsurdSidesAreCorrupt() {
        for (width, height) in [(0, 10), (10, 0), (0x8000_0000, 1), (1, 0xFFFF_FFFF)] {
            let error = Self.error(reading: Self.headerOnlyPNG(width: width, height: height, colorType: 2))
            guard case .corruptData = error else { Issue.record("\(width)×\(height): \(String(describing: error))"); continue }
        }
        // A GIF whose screen is 0×0 and holds no image; a JPEG frame header of height 0.
        let gif = Data("GIF89a".utf8) + Data([0, 0, 0, 0, 0, 0, 0, 0x3B])
        #expect(Self.error(reading: gif) == .corruptData("GIF: no image"))
        let sof: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 0, 0, 10, 1, 1, 0x11, 0, 0xFF, 0xD9]
        #expect(Self.error(reading: Data(sof)) == .corruptData("JPEG: the frame header is short or declares an empty side"))
    }

    /// The error reading `data` throws, or `nil` when it answers.
    static func error(reading data: Data) -> WebImageError? {
        do {
            _ = try ImageInfo.read(from: data)
            return nil
        } catch {
            return error
        }
    }

    /// Every prefix length of every format (a few hundred cuts each) and bytes flipped through
    /// each file: an answer or a typed error, never a trap or a hang.
    @Test(arguments: [ImageFormat.jpeg, .png, .gif, .webp, .avif, .heic, .jxl])
    func truncatedAndMutatedFilesGiveAnswersOrTypedErrors(_ format: ImageFormat) throws {
        guard let data = try Self.sample(format) else { return }
        let full = try ImageInfo.read(from: data)
        #expect(full.format == format && full.bytes == data.count)
        let step = max(1, data.count / 200)
        var outcomes: [String: Int] = [:]
        for length in stride(from: 1, to: data.count, by: step) {
            do {
                let info = try ImageInfo.read(from: data.prefix(length))
                #expect(info.bytes == length)
                outcomes["answered", default: 0] += 1
            } catch {
                switch error {
                case .truncatedData: outcomes["truncatedData", default: 0] += 1
                case .corruptData: outcomes["corruptData", default: 0] += 1
                case .unsupportedFormat: outcomes["unsupportedFormat", default: 0] += 1
                default: Issue.record("\(format) cut at \(length): \(error)")
                }
            }
        }
        #expect(outcomes["truncatedData", default: 0] + outcomes["corruptData", default: 0] > 0, "\(outcomes)")
        var random = SampleImages.SeededBytes(seed: UInt64(data.count))
        for _ in 0..<200 {
            var mutated = data
            for _ in 0..<4 {
                let index = Int(random.next() % UInt64(data.count))
                mutated[index] = UInt8(truncatingIfNeeded: random.next())
            }
            if let info = try? ImageInfo.read(from: mutated) {
                #expect(info.width >= 1 && info.height >= 1 && info.frames >= 1)
            }
        }
    }

    // MARK: Pillow, on the shared corpus

    /// Formats Pillow names in the manifest, and ours.
    static let formats: [String: ImageFormat] = ["JPEG": .jpeg, "MPO": .jpeg, "PNG": .png, "GIF": .gif, "WEBP": .webp, "AVIF": .avif]

    /// Where our answer differs from Pillow's, and why; each entry must still differ (a fix
    /// makes the test fail until it is removed).
    static let differences: [String: String] = [
        // MPO: a JPEG followed by a second one (here a gain map) that the MP extension points
        // at. Pillow counts both; the library decodes and serves the first, as browsers show it.
        "jpeg/libavif/apple_gainmap_new.jpg": "frames",
        // The first frame lies outside the 100×100 logical screen: Pillow grows the canvas to
        // hold it (300×100); the library's decoder clips frames to the screen, as browsers do
        // (CorpusDecodeTests), so the info gives the screen.
        "gif/gif-test-suite/animated_transparent_loop_frames_out_of_bounds.gif": "size",
        // A grid colour image with a single (non-grid) alpha item: libavif 0.11.1 does not pair
        // them (libavif 1.x, Pillow's, does), so it reports no alpha, and decodes the image opaque.
        "other/libavif/color_grid_alpha_nogrid.avif": "hasAlpha",
    ]

    static var corpusFiles: [String] {
        Corpus.names { _, entry in !entry.expectsError && entry.format != nil }
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), arguments: corpusFiles)
    func agreesWithPillow(_ name: String) throws {
        let entry = try #require(Corpus.entries[name])
        let data = try Corpus.data(name)
        guard let format = entry.format.flatMap({ Self.formats[$0] }) else {
            // ICO: no format of the library's.
            #expect(throws: WebImageError.unsupportedFormat("no known image format")) { try ImageInfo.read(from: data) }
            return
        }
        let info = try ImageInfo.read(from: data)
        var differs: [String] = []
        if info.format != format { differs.append("format") }
        if info.width != entry.width || info.height != entry.height { differs.append("size") }
        if info.frames != (entry.frame_count ?? 1) { differs.append("frames") }
        if info.hasAlpha != (entry.has_alpha ?? false) { differs.append("hasAlpha") }
        if info.orientation != ImageOrientation(exifValue: entry.exif_orientation ?? 1) { differs.append("orientation") }
        if (info.colorProfile != nil) != (entry.flags ?? []).contains("icc_profile") { differs.append("hasProfile") }
        #expect(info.bytes == entry.bytes)
        let expected = Self.differences[name].map { [$0] } ?? []
        #expect(differs == expected, """
            \(name): ours \(info.format) \(info.width)×\(info.height) frames \(info.frames) alpha \(info.hasAlpha) \
            \(info.orientation) profile \(info.colorProfile ?? "none"); Pillow \(entry.format ?? "") \(entry.width ?? 0)×\(entry.height ?? 0) \
            frames \(entry.frame_count ?? 1) alpha \(entry.has_alpha ?? false) orientation \(entry.exif_orientation ?? 0)
            """)
    }

    /// Files Pillow cannot open (HEIF, JPEG XL; the manifest has no answer for them).
    static let notOpenedByPillow = [
        "other/kingfisher/gradient-10b-displayp3-alpha.heic", "other/kingfisher/gradient-10b-srgb-opaque.heic",
        "other/sdwebimage/TestImage.heif", "other/sdwebimage/TestImageAnimated.heics", "other/sdwebimage/TestHDR.jxl",
    ]

    /// For those, the library's own full decode is the oracle: the info must describe what it decodes.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), arguments: notOpenedByPillow)
    func formatsPillowCannotOpenAgreeWithTheFullDecode(_ name: String) throws {
        let data = try Corpus.data(name)
        let info = try ImageInfo.read(from: data)
        let decoded = try Self.coders.decode(data, options: DecodeOptions())
        #expect(info.format == decoded.format)
        #expect((info.width, info.height) == (decoded.width, decoded.height))
        #expect(info.frames == decoded.frames.count)
        #expect(info.hasAlpha == decoded.hasAlpha)
        #expect(info.orientation == decoded.orientation)
        #expect(info.bytes == data.count)
    }

    /// Profile descriptions against Debian Pillow's `ImageCms.getProfileDescription` (the
    /// manifest records only that a profile is there). Pillow 9.4 opens no AVIF: those files are
    /// listed as not compared.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), .enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func profileDescriptionsAgreeWithPillow() throws {
        let names = Corpus.names { _, entry in (entry.flags ?? []).contains("icc_profile") }
        #expect(names.count >= 10)
        let pillow = try Self.pillowProfileDescriptions(names)
        var compared = 0
        var notCompared: [String] = []
        for name in names {
            guard let description = pillow[name] ?? nil else { notCompared.append(name); continue }
            let info = try ImageInfo.read(from: Corpus.data(name))
            #expect(info.colorProfile == description, "\(name)")
            compared += 1
        }
        #expect(compared >= 10, "compared \(compared)")
        print("ImageInfo: profile descriptions compared with Pillow for \(compared) files; not compared (Pillow 9.4 cannot open them): \(notCompared)")
    }

    /// Runs Debian's Pillow on corpus files: each name's profile description (trailing newline
    /// removed), or `nil` when Pillow cannot open the file or it has no profile.
    static func pillowProfileDescriptions(_ names: [String]) throws -> [String: String?] {
        let root = try #require(Corpus.root)
        let script = """
            import io, json, sys
            from PIL import Image, ImageCms
            out = {}
            for name in sys.argv[2:]:
                try:
                    icc = Image.open(sys.argv[1] + "/" + name).info.get("icc_profile")
                    out[name] = ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(icc))).rstrip("\\n") if icc else None
                except Exception:
                    out[name] = None
            sys.stdout.write(json.dumps(out))
            """
        let result = try PillowOracle.run(["-c", script, root.path] + names)
        try #require(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output)) as? [String: Any])
        return object.mapValues { $0 as? String }
    }

    // MARK: Helpers

    static func jpeg(width: Int, height: Int) throws -> Data {
        try coders.encode(DecodedImage(bitmap: try SampleImages.gradient(width: width, height: height), hasAlpha: false),
                          format: .jpeg, options: EncodeOptions(quality: 0.9))
    }

    /// `jpeg` with an EXIF APP1 segment after SOI whose orientation is `value`.
    static func withEXIFOrientation(_ jpeg: Data, _ value: UInt8) -> Data {
        let tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, value, 0, 0, 0, 0, 0, 0]
        let body = Array("Exif\0\0".utf8) + tiff
        return Data(jpeg.prefix(2)) + Data([0xFF, 0xE1, 0, UInt8(body.count + 2)] + body) + Data(jpeg.dropFirst(2))
    }

    /// A PNG of its signature, an IHDR and an IEND: no image data.
    static func headerOnlyPNG(width: Int, height: Int, colorType: UInt8) -> Data {
        var png = Data(PNGCoder.signature)
        var header = Data()
        header.appendBigEndian(UInt32(truncatingIfNeeded: width))
        header.appendBigEndian(UInt32(truncatingIfNeeded: height))
        header.append(contentsOf: [8, colorType, 0, 0, 0])
        png.appendChunk("IHDR", header)
        png.appendChunk("IEND", Data())
        return png
    }

    /// A 48×32 sample with alpha in `format` (animated GIF and WebP have three frames); for HEIC,
    /// which the library does not encode, a corpus file (`nil` without the corpus).
    static func sample(_ format: ImageFormat) throws -> Data? {
        if format == .heic {
            return Corpus.isAvailable ? try Corpus.data("other/kingfisher/gradient-10b-displayp3-alpha.heic") : nil
        }
        let bitmap = try SampleImages.quadrants(width: 48, height: 32, transparentCenter: true)
        if format == .gif || format == .webp {
            let frames = [ImageFrame(bitmap: bitmap, duration: 0.1), ImageFrame(bitmap: try SampleImages.gradient(width: 48, height: 32), duration: 0.1),
                          ImageFrame(bitmap: bitmap, duration: 0.1)]
            return try coders.encode(try DecodedImage(frames: frames, hasAlpha: true), format: format, options: EncodeOptions(quality: 0.8))
        }
        return try coders.encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: format, options: EncodeOptions(quality: 0.8))
    }
}
