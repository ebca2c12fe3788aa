import Foundation
import Testing
@testable import WebImage

/// AVIF through libavif: compared with Debian's `avifdec` (same libavif 0.11.1) pixel for pixel,
/// with Pillow's answers in the corpus manifest (CorpusDecodeTests), and round trips through our
/// own encoder and `avifenc`.
@Suite struct AVIFCoderTests {
    /// 8- and 12-bit corpus files, grids and sequences: Debian's `avifdec` (libavif 0.11.1) writes
    /// the same pixels as we decode. (Not an oracle for 10-bit files, whose 8-bit PNG it derives
    /// by its own path, 3 levels from both us and Pillow, nor for monochrome, which it writes as
    /// limited-range luma without expanding it.)
    static let avifdecFiles = [
        CorpusDecodeTests.avifAlphaUnpairedWithGrid, "other/libavif/colors-animated-12bpc-keyframes-0-2-3.avif",
        "other/libavif/colors-animated-8bpc.avif", "other/libavif/sofa_grid1x5_420.avif", "other/libavif/draw_points_idat.avif",
        "other/av1-avif/Link-U/kimono.avif",
    ]

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason),
          .enabled(if: CodecTool.avifdec.isAvailable, CodecTool.avifdec.absentReason), arguments: avifdecFiles)
    func matchesAvifdecPixelForPixel(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let image = try AVIFCoder().decode(try Corpus.data(name), options: DecodeOptions(keepsColors: true))
        for index in image.frames.indices {
            let png = directory.url.appendingPathComponent("\(index).png").path
            try CodecTool.avifdec.run(["--depth", "8", "--index", "\(index)", try #require(Corpus.url(name)).path, png])
            // avifdec writes the decoded pixels as they are, with any profile embedded: compare them kept.
            let truth = try PNGCoder().decode(try Data(contentsOf: URL(fileURLWithPath: png)), options: DecodeOptions(keepsColors: true))
            #expect(PixelDifference.maximum(image.frames[index].bitmap, truth.bitmap) == 0, "frame \(index)")
        }
    }

    /// The files whose hashes differ from Pillow 13's (CorpusDecodeTests.avifRoundingDiffersFromPillow),
    /// compared with Pillow's pixels within the stated tolerance, when a Pillow that reads AVIF
    /// (Pillow ≥ 11 with its libavif; `WEBIMAGE_PILLOW_PYTHON` names its python) is installed.
    /// 4:4:4 and monochrome: rounding only (1 level); 4:2:0 and 12-bit: chroma upsampling too.
    /// Pillow's plain decode does no colour management, so the comparison keeps the file's colours
    /// (an HDR file is tone-mapped otherwise; `corpusAVIFFilesDecodeConverted` covers that path).
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason),
          .enabled(if: PillowAVIF.python != nil, "no Pillow with AVIF support (set WEBIMAGE_PILLOW_PYTHON)"),
          arguments: CorpusDecodeTests.avifRoundingDiffersFromPillow.sorted())
    func matchesPillowWithinTolerance(_ name: String) throws {
        let tolerance = name.contains("yuv444") || name.contains("monochrome") ? 1 : 4
        let image = try AVIFCoder().decode(try Corpus.data(name), options: DecodeOptions(keepsColors: true))
        let directory = try TemporaryDirectory()
        let frames = try PillowAVIF.frames(of: try #require(Corpus.url(name)), into: directory.url)
        #expect(frames.count == image.frames.count)
        for (index, pixels) in frames.enumerated() where index < image.frames.count {
            let truth = try Bitmap(width: image.width, height: image.height) { buffer in
                guard pixels.count == buffer.count else { return }
                pixels.withUnsafeBytes { buffer.copyMemory(from: $0) }
            }
            #expect(pixels.count == image.frames[index].bitmap.byteCount)
            let difference = try #require(PixelDifference.maximum(image.frames[index].bitmap, truth))
            #expect(difference <= tolerance, "frame \(index): \(difference) levels")
        }
    }

    /// Chimera's clean aperture is 480×256 at row 7 (an odd offset in 4:2:0, which libavif 0.11's
    /// own converter refuses): we crop it; Pillow does not, and the uncropped frame is Pillow's.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func cleanApertureIsCropped() throws {
        let name = CorpusDecodeTests.avifCleanAperture
        let data = try Corpus.data(name)
        let whole = try AVIFCoder(applyCleanAperture: false).decode(data, options: DecodeOptions())
        #expect(whole.bitmap.canonicalSHA256() == Corpus.entries[name]?.rgba_sha256)
        let cropped = try AVIFCoder().decode(data, options: DecodeOptions())
        #expect(cropped.width == 480 && cropped.height == 256)
        let expected = try whole.bitmap.cropped(x: 0, y: 7, width: 480, height: 256)
        #expect(PixelDifference.maximum(cropped.bitmap, expected) == 0)
    }

    /// `irot` turns anti-clockwise before `imir` mirrors (mode 0 top-bottom, 1 left-right): each
    /// of the 12 combinations is the EXIF orientation of the same display transform.
    @Test func orientationFromRotationAndMirror() {
        let expected: [Int: [ImageOrientation]] = [
            0: [.up, .downMirrored, .upMirrored], 1: [.left, .leftMirrored, .rightMirrored],
            2: [.down, .upMirrored, .downMirrored], 3: [.right, .rightMirrored, .leftMirrored],
        ]
        for (angle, orientations) in expected {
            #expect(AVIFCoder.orientation(quarterTurnsAntiClockwise: angle, mirrorMode: nil) == orientations[0])
            #expect(AVIFCoder.orientation(quarterTurnsAntiClockwise: angle, mirrorMode: 0) == orientations[1])
            #expect(AVIFCoder.orientation(quarterTurnsAntiClockwise: angle, mirrorMode: 1) == orientations[2])
        }
    }

    @Test func losslessRoundTripIsExact() throws {
        let bitmap = try PixelDifference.gradient(width: 67, height: 45, alpha: true)
        let data = try AVIFCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .avif,
                                          options: EncodeOptions(lossless: true))
        #expect(ImageFormat.detect(data) == .avif)
        let decoded = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(decoded.format == .avif && decoded.hasAlpha)
        #expect(PixelDifference.maximum(decoded.bitmap, bitmap) == 0)
    }

    /// Lossy 4:2:0 at quality 0.9: close on average, not exact.
    @Test func lossyRoundTripIsClose() throws {
        let bitmap = try PixelDifference.gradient(width: 64, height: 64, alpha: false)
        let data = try ImageCodersManager.shared.encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .avif,
                                                        options: EncodeOptions(quality: 0.9))
        let decoded = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(!decoded.hasAlpha)
        let difference = try #require(PixelDifference.mean(decoded.bitmap, bitmap))
        #expect(difference < 2, "mean \(difference) levels")
        let smaller = try AVIFCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .avif,
                                             options: EncodeOptions(quality: 0.3))
        #expect(smaller.count < data.count)
    }

    @Test func animationRoundTrip() throws {
        let frames = try (0..<3).map { ImageFrame(bitmap: try PixelDifference.gradient(width: 32, height: 24, alpha: false, seed: $0),
                                                  duration: Double($0 + 1) / 10) }
        let image = try DecodedImage(frames: frames, loopCount: 0, hasAlpha: false)
        let data = try AVIFCoder().encode(image, format: .avif, options: EncodeOptions(lossless: true))
        #expect(FormatDetection(data).isAnimated)
        let decoded = try AVIFCoder().decode(data, options: DecodeOptions())
        #expect(decoded.frames.count == 3 && decoded.loopCount == 0)
        #expect(decoded.durations.map { Int(($0 * 1000).rounded()) } == [100, 200, 300])
        for index in 0..<3 { #expect(PixelDifference.maximum(decoded.frames[index].bitmap, frames[index].bitmap) == 0) }
        let first = try AVIFCoder().decode(data, options: DecodeOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1)
        let budget = try AVIFCoder().decode(data, options: DecodeOptions(animationByteLimit: 32 * 24 * 4 * 2))
        #expect(budget.frames.count == 2)
    }

    /// A file made by Debian's `avifenc` (lossless) from a PNG we wrote decodes to that PNG.
    @Test(.enabled(if: CodecTool.avifenc.isAvailable, CodecTool.avifenc.absentReason))
    func avifencLosslessDecodesExactly() throws {
        let directory = try TemporaryDirectory()
        let bitmap = try PixelDifference.gradient(width: 50, height: 31, alpha: true)
        let png = directory.url.appendingPathComponent("in.png"), avif = directory.url.appendingPathComponent("out.avif")
        try PNGCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .png, options: EncodeOptions()).write(to: png)
        try CodecTool.avifenc.run(["--lossless", "--speed", "10", png.path, avif.path])
        let decoded = try ImageCodersManager.shared.decode(try Data(contentsOf: avif), options: DecodeOptions())
        #expect(PixelDifference.maximum(decoded.bitmap, bitmap) == 0)
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func thumbnailsOfStillsGridsAndSequences() throws {
        let grid = try AVIFCoder().decode(try Corpus.data("other/libavif/sofa_grid1x5_420.avif"), options: DecodeOptions(maxPixelSize: 256))
        #expect(grid.width == 256 && grid.height == 193)
        let sequence = try AVIFCoder().decode(try Corpus.data("other/libavif/colors-animated-8bpc.avif"), options: DecodeOptions(maxPixelSize: 50))
        #expect(sequence.frames.count == 5 && sequence.frames.allSatisfy { $0.bitmap.width == 50 && $0.bitmap.height == 50 })
    }

    /// The header's size is refused before any frame is decoded; scale-down decodes it smaller.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func pixelLimitHoldsFromTheHeader() throws {
        let data = try Corpus.data("other/av1-avif/Link-U/kimono.avif") // 722×1024
        try expectPixelLimitHolds(AVIFCoder(), data, pixelLimit: 400_000)
    }

    /// Every prefix length class and some corrupted bytes: a typed error, never a crash.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func hostileBytesGetTypedErrors() throws {
        let data = try Corpus.data("other/libavif/colors-animated-8bpc.avif")
        expectHostileBytesFail(AVIFCoder(), truncating: data, at: [12, 40, 100, 300, data.count / 2, data.count - 1],
                               corrupting: try Corpus.data("other/av1-avif/Link-U/kimono.avif"), from: 400, every: 997)
        #expect(throws: WebImageError.self) { try AVIFCoder().decode(Data("\0\0\0\u{18}ftypavif\0\0\0\0mif1garbage".utf8), options: DecodeOptions()) }
    }

    /// Debian's libavif is built with aom, so AVIF encoding is there; asking the AVIF coder for
    /// another format is a typed `unsupportedFormat`.
    @Test func encoderAvailability() throws {
        #expect(AVIFCoder.encoderName != nil)
        #expect(AVIFCoder().canEncode(.avif) && ImageCodersManager.shared.canEncode(.avif))
        let image = DecodedImage(bitmap: try Bitmap(width: 2, height: 2, filledWith: (1, 2, 3, 255)), hasAlpha: false)
        #expect {
            try AVIFCoder().encode(image, format: .jxl, options: EncodeOptions())
        } throws: { error in
            guard case .unsupportedFormat = error as? WebImageError else { return false }
            return true
        }
    }
}

/// A python whose Pillow decodes AVIF (Debian's Pillow 9.4 does not), as an optional oracle.
enum PillowAVIF {
    static let python: String? = {
        let candidates = [ProcessInfo.processInfo.environment["WEBIMAGE_PILLOW_PYTHON"], "/usr/bin/python3"].compactMap { $0 }
        return candidates.first { path in
            guard FileManager.default.isExecutableFile(atPath: path) else { return false }
            let check = "from PIL import features; import sys; sys.exit(0 if features.check('avif') else 1)"
            return (try? ChildProcess.runBlocking(path, ["-c", check]))?.status == 0
        }
    }()

    /// Every frame of `file` as Pillow's RGBA8, transparent pixels zeroed as the corpus rules say.
    static func frames(of file: URL, into directory: URL) throws -> [Data] {
        let script = """
        import sys
        from PIL import Image, ImageSequence
        image = Image.open(sys.argv[1])
        for index, frame in enumerate(ImageSequence.Iterator(image)):
            data = bytearray(frame.convert("RGBA").tobytes())
            for i in range(3, len(data), 4):
                if data[i] == 0: data[i-3:i] = b"\\0\\0\\0"
            open("%s/%d.rgba" % (sys.argv[2], index), "wb").write(data)
        """
        try #require(try ChildProcess.runBlocking(try #require(python), ["-c", script, file.path, directory.path]).status == 0)
        var frames: [Data] = []
        while let data = try? Data(contentsOf: directory.appendingPathComponent("\(frames.count).rgba")) { frames.append(data) }
        return frames
    }
}
