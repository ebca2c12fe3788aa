import Foundation
import Testing
@testable import WebImage

/// Every image in the shared corpus, decoded by our coders and compared with Pillow's answers
/// in `manifest.json` (size, frames, durations, loop count, orientation, every frame's pixels).
///
/// Where our answer legitimately differs from Pillow's, the file is listed below with the reason.
@Suite struct CorpusDecodeTests {
    static let decodedFormats: Set = ["JPEG", "MPO", "PNG", "GIF", "WEBP", "AVIF"]

    /// Partial progressive JPEGs (a few scans only): Debian's libjpeg-turbo 2.1.5 smooths the
    /// missing coefficients slightly differently from Pillow's 3.2.0. Measured against Pillow with
    /// libjpeg-turbo 3.2.0: at most 2 levels per channel, mean 0.04. Fully scanned progressive
    /// files match exactly.
    static let partialProgressiveJPEGs: Set = [
        "jpeg/wuffs/peacock.progressive.scan001.jpeg", "jpeg/wuffs/peacock.progressive.scan003.jpeg",
        "jpeg/wuffs/peacock.progressive.scan004.jpeg", "jpeg/wuffs/peacock.progressive.scan006.jpeg",
        "jpeg/wuffs/peacock.progressive.scan008.jpeg",
    ]

    /// GIFs whose NETSCAPE loop block comes after the first frame: Pillow reads metadata up to the
    /// first frame only and reports none; like browsers we honour the first block wherever it is.
    static let loopBlockAfterFirstFrame: [String: Int] = ["gif/wuffs/artificial-gif/multiple-loop-counts.gif": 40]

    /// APNG frames after a frame that disposes with "previous": the APNG spec (and browsers, and
    /// we) restore the canvas before the next frame. Pillow does not: e.g. its frame 68 of
    /// TestImageAnimated.apng equals frame 67's canvas with frame 68 composited on top (checked
    /// with Pillow 13.0.0). Frames before the first such frame are compared exactly.
    static let pillowSkipsDisposePrevious: [String: Int] = [
        "png/sdwebimage/TestImageAnimated.apng": 68,
        "png/wuffs/animated-red-blue.apng": 3,
    ]

    /// AVIF files whose pixels differ from Pillow 13's: Pillow's libavif 1.4.2 converts 10/12-bit
    /// and monochrome YUV through libyuv (its own fixed-point rounding and chroma upsampling),
    /// Debian's libavif 0.11.1 through its exact path. Measured against Pillow 13.0.0: at most 4
    /// levels per channel (fox 10-bit 4:2:0: max 3, mean 0.34; 4:4:4: max 1; monochrome: max 1;
    /// TestHDR: max 3; 12-bit frames: max 4 on one channel, mean 0.5). These are compared pixel
    /// for pixel with Debian's `avifdec` instead (AVIFCoderTests).
    static let avifRoundingDiffersFromPillow: Set = [
        "other/av1-avif/Link-U/fox.profile0.10bpc.yuv420.avif", "other/av1-avif/Link-U/fox.profile0.8bpc.yuv420.monochrome.avif",
        "other/av1-avif/Link-U/fox.profile1.10bpc.yuv444.odd-height.avif", "other/sdwebimage/TestHDR.avif",
        "other/libavif/colors-animated-12bpc-keyframes-0-2-3.avif",
    ]

    /// A grid colour image with a single (non-grid) alpha item: libavif 0.11.1 does not pair them
    /// and decodes the colour opaque (libavif 1.x does); `avifdec` 0.11.1 does the same.
    static let avifAlphaUnpairedWithGrid = "other/libavif/color_grid_alpha_nogrid.avif"

    /// A clean aperture at an odd offset: Pillow does not crop, we do (as browsers do). The
    /// uncropped pixels are compared with Pillow's, the crop in AVIFCoderTests.
    static let avifCleanAperture = "other/av1-avif/Microsoft/Chimera_8bit_cropped_480x256.avif"

    static var validFiles: [String] {
        Corpus.names { _, entry in !entry.expectsError && decodedFormats.contains(entry.format ?? "") }
    }

    /// JPEGs Pillow refuses only because it does not load truncated images by default: with
    /// `LOAD_TRUNCATED_IMAGES` it decodes them as libjpeg and browsers do, and so do we
    /// (JPEGFidelityTests compares the pixels).
    static let truncatedJPEGs: Set = ["jpeg/wuffs/peacock.default.truncated.jpeg"]

    /// Files Pillow refuses, except truncated JPEGs (above) and the HEIF and JPEG XL files it
    /// cannot read at all, which we decode and compare with `heif-convert` and `djxl`
    /// (HEIFCoderTests, JXLCoderTests).
    static var refusedFiles: [String] {
        Corpus.names { name, entry in
            entry.expectsError && !truncatedJPEGs.contains(name) && !["HEIF/HEIC", "JPEG XL"].contains(entry.oracle_unsupported ?? "")
        }
    }

    static var otherFormats: [String] {
        Corpus.names { _, entry in !entry.expectsError && !decodedFormats.contains(entry.format ?? "") }
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), arguments: validFiles)
    func decodesLikePillow(_ name: String) throws {
        let entry = try #require(Corpus.entries[name])
        let coders = name == Self.avifCleanAperture ? ImageCodersManager(coders: [AVIFCoder(applyCleanAperture: false)]) : .shared
        // The manifest's hashes are Pillow's plain decode (no colour management): compare the kept
        // colours; ColorConversionTests compares the converted ones with Pillow's ImageCms.
        let image = try coders.decode(try Corpus.data(name), options: DecodeOptions(keepsColors: true))
        let frameCount = entry.frame_count ?? 1
        #expect(image.width == entry.width && image.height == entry.height || isClippedGIF(name))
        #expect(image.orientation.exifValue == max(1, entry.exif_orientation ?? 1))
        if entry.format != "MPO" {
            // MPO: the extra MPF images are gain maps, not frames; we decode the primary image.
            #expect(image.frames.count == frameCount)
        }
        if entry.format != "GIF", name != Self.avifAlphaUnpairedWithGrid {
            // GIF: we report alpha when a shown frame has transparent pixels; Pillow reports it when
            // the first frame declares a transparent index, even if no pixel uses it.
            #expect(image.hasAlpha == entry.has_alpha)
        }
        if let durations = entry.frame_durations_ms, frameCount > 1, entry.format != "MPO" {
            #expect(image.durations.map { Int(($0 * 1000).rounded()) } == durations.map { Int(($0 ?? 0).rounded()) })
        }
        if frameCount > 1, entry.format != "MPO" {
            // AVIF sequences: Pillow reports no loop count; libavif 0.11 reads no edit list, and
            // like browsers we play them forever (0).
            let expectedLoop = entry.format == "AVIF" ? 0 : Self.loopBlockAfterFirstFrame[name] ?? entry.loop ?? 1
            #expect(image.loopCount == expectedLoop)
        }
        if Self.partialProgressiveJPEGs.contains(name) || Self.avifRoundingDiffersFromPillow.contains(name)
            || name == Self.avifAlphaUnpairedWithGrid { return }
        if name.hasPrefix("gif/gif-test-suite/"), name.hasSuffix(".gif") {
            try compareWithImageMagickFrames(name, image)
            return
        }
        #expect(image.bitmap.canonicalSHA256() == entry.rgba_sha256, "first frame pixels")
        if let hashes = entry.frame_sha256, entry.format != "MPO" {
            let comparable = Self.pillowSkipsDisposePrevious[name] ?? hashes.count
            for (index, hash) in hashes.enumerated() where index < min(comparable, image.frames.count) {
                #expect(image.frames[index].bitmap.canonicalSHA256() == hash, "frame \(index)")
            }
        }
    }

    /// The gif-test-suite ships ImageMagick's frames as PNGs; they are the truth for GIF
    /// compositing. Pillow differs from them on two files (SOURCES.md): after "restore to
    /// background" without a transparent index it keeps the rectangle, and it grows the canvas to
    /// frames outside the logical screen. We follow ImageMagick and browsers.
    private func compareWithImageMagickFrames(_ name: String, _ image: DecodedImage) throws {
        let stem = (name as NSString).deletingPathExtension
        let directory = (stem as NSString).deletingLastPathComponent + "/frames/"
        let base = (stem as NSString).lastPathComponent
        for index in image.frames.indices {
            let framePath = directory + (image.frames.count == 1 ? "\(base).png" : "\(base)-\(index).png")
            let truth = try PNGCoder().decode(try Corpus.data(framePath), options: DecodeOptions(keepsColors: true))
            #expect(image.frames[index].bitmap.canonicalSHA256() == truth.bitmap.canonicalSHA256(), "frame \(index) vs ImageMagick")
        }
    }

    private func isClippedGIF(_ name: String) -> Bool {
        name == "gif/gif-test-suite/animated_transparent_loop_frames_out_of_bounds.gif"
    }

    /// Files Pillow refused: we must refuse them too with a typed error.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), arguments: refusedFiles)
    func refusesWhatPillowRefuses(_ name: String) throws {
        let data = try Corpus.data(name)
        #expect(throws: WebImageError.self) { try ImageCodersManager.shared.decode(data, options: DecodeOptions()) }
    }

    /// ICO and other formats we recognise (or not) but do not decode: a typed
    /// `unsupportedFormat`, never a crash.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), arguments: otherFormats)
    func otherFormatsAreUnsupported(_ name: String) throws {
        let data = try Corpus.data(name)
        #expect {
            try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        } throws: { error in
            guard case .unsupportedFormat = error as? WebImageError else { return false }
            return true
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func thumbnailsOfEveryStillFitTheirBox() throws {
        for name in Self.validFiles.prefix(400) {
            let entry = try #require(Corpus.entries[name])
            guard (entry.frame_count ?? 1) == 1, let width = entry.width, let height = entry.height, max(width, height) > 64 else { continue }
            let image = try ImageCodersManager.shared.decode(try Corpus.data(name), options: DecodeOptions(maxPixelSize: 64))
            #expect(max(image.width, image.height) == 64, "\(name)")
        }
    }
}
