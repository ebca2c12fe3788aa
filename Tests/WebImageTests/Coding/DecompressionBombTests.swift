import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Hostile animations and canvases, written by the tests themselves, each with the most memory and
/// time its decode may cost. Costs are measured on the `webimage decode` binary in a child process
/// (peak resident memory and CPU time, see ``MeasuredRun``); the binary alone, decoding a tiny
/// file, peaks at about 20 MB. Time bounds are generous hang guards, not speed checks.
///
/// | sample | file | may cost |
/// |---|---|---|
/// | GIF, 1×1 screen, 200 000 frames | 3 MB | 10 000 frames, 40 MB, 5 s CPU |
/// | GIF, 2048×2048 screen, 40 frames, as a 64 px thumbnail | 10 KB | 40 thumbnails, 80 MB, 10 s CPU |
/// | GIF, 4×4 screen, one 65535×65535 frame | 70 KB | 32 MB, 2 s CPU |
/// | GIF, 3000×3000 screen, one colour (LZW at its limit) | 7 KB | decodes: 110 MB, 10 s CPU |
/// | GIF, 6000×6000 screen, one 1×1 frame | 60 B | refused: 32 MB, 2 s CPU |
/// | APNG, 6000×6000 canvas, one 1×1 frame | 150 B | refused: 32 MB, 2 s CPU |
/// | animated WebP, 1×1 canvas, 10 050 frames | 300 KB | 10 000 frames, 40 MB, 5 s CPU |
/// | animated WebP, 10 000×10 000 canvas, two 1×1 frames | 150 B | refused: 32 MB, 2 s CPU |
/// | JPEG, 300 000 DHT segments before its scan, as a 1/8 thumbnail | 6.6 MB | decodes: 0.5 s CPU |
///
/// Before these limits the same samples cost: all 200 000 GIF frames; 560 MB for the thumbnail;
/// a truncated-data error after decoding rows off the screen; 300 MB and 450 MB for the two tiny
/// files; all 10 050 WebP frames.
///
/// The limits' rule (``DecodeOptions/animationByteLimit``): frames past ``DecodeOptions/maxFrameCount``
/// or the byte budget are never decoded; the image keeps the frames that fit and says why in
/// ``DecodedImage/truncation``.
@Suite(.timeLimit(.minutes(2)))
struct DecompressionBombTests {
    static let canMeasure = MeasuredRun.canMeasure
    static let megabyte = 1 << 20

    // MARK: - Measured in a child process

    /// A 1×1 screen admitted millions of frames: each was 4 bytes against the budget, the frame
    /// count unbounded. Now the decode stops at the frame limit.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func gifWithHundredsOfThousandsOfTinyFrames() async throws {
        var gif = GIFBuilder(width: 1, height: 1)
        gif.repeatRecord(GIFBuilder.imageRecord(left: 0, top: 0, width: 1, height: 1, pixels: [1]), count: 200_000)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(gif.data, named: "frames.gif", in: directory), "--json"])
        let json = try run.json()
        #expect(json["frames"] as? Int == DecodeOptions.defaultMaxFrameCount, "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 40 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 5, "\(run.cpuSeconds) s of CPU")
    }

    /// A thumbnail of an animation held every full-size frame before shrinking them; now each
    /// frame is shrunk as it is composed, so one full-size canvas exists at a time.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func gifThumbnailKeepsOneFullSizeCanvas() async throws {
        let side = 2048
        var gif = GIFBuilder(width: side, height: side)
        gif.addFrame(width: side, height: side, pixels: [UInt8](repeating: 1, count: side * side), delay: 5)
        for index in 1..<40 {
            gif.addFrame(left: index, top: index, width: 1, height: 1, pixels: [UInt8(index % 3 + 1)], delay: 5)
        }
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(gif.data, named: "large.gif", in: directory),
                                         "--json", "--max-pixel-size", "64"])
        let json = try run.json()
        #expect(json["frames"] as? Int == 40 && json["width"] as? Int == 64, "\(run.stdout)")
        // 16 MB canvas + 16 MB snapshot + the binary; forty full-size frames would be 640 MB.
        #expect(run.peakMemoryBytes <= 80 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 10, "\(run.cpuSeconds) s of CPU")
    }

    /// A frame far larger than the screen: only its rows on the screen are decoded. The sample's
    /// LZW data ends after the visible rows, so decoding any further row fails: it decodes only
    /// when the rows off the screen are skipped undecoded.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func gifFrameFarLargerThanTheScreenIsClipped() async throws {
        var gif = GIFBuilder(width: 4, height: 4)
        let visible = (0..<(4 * 65535)).map { UInt8($0 % 65535 < 4 ? 2 : 3) }
        gif.addFrame(width: 65535, height: 65535, pixels: visible)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(gif.data, named: "oversized.gif", in: directory), "--json"])
        let json = try run.json()
        #expect(json["width"] as? Int == 4 && json["height"] as? Int == 4 && json["frames"] as? Int == 1, "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 32 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 2, "\(run.cpuSeconds) s of CPU")

        // In process: the pixels on the screen are the frame's first four columns of each row.
        let image = try GIFCoder().decode(gif.data, options: DecodeOptions())
        #expect(image.bitmap.pixel(x: 3, y: 3).map { [$0.r, $0.g, $0.b, $0.a] } == [0, 255, 0, 255])
    }

    /// Interlaced rows come in four passes, so rows on the screen follow rows off it: decoding
    /// stops after the last row on the screen. The sample's data ends there (rows 0, 8, 4, 2, 6,
    /// 10, 1, 3 of a 12-row frame on a 4-row screen), so it decodes only when the rest is skipped.
    @Test func interlacedFrameTallerThanTheScreenStopsAfterItsLastVisibleRow() throws {
        var gif = GIFBuilder(width: 4, height: 4)
        let order = GIFBuilder.interlacedRowOrder(height: 12)
        let lastVisible = try #require(order.lastIndex { $0 < 4 })
        let pixels = order.prefix(lastVisible + 1).flatMap { row in [UInt8](repeating: UInt8(row % 3 + 1), count: 4) }
        gif.addFrame(width: 4, height: 12, pixels: pixels, interlaced: true)
        let image = try GIFCoder().decode(gif.data, options: DecodeOptions())
        let colors: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        for row in 0..<4 {
            #expect(image.bitmap.pixel(x: 2, y: row).map { [$0.r, $0.g, $0.b] } == colors[row % 3], "row \(row)")
        }
    }

    /// LZW data that expands as far as LZW can (one colour over a 3000×3000 screen, about 2000
    /// pixels a byte) is a valid image: it decodes, within the pixel limit and the canvas it
    /// declares (canvas and one frame, 36 MB each).
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func gifWhoseDataExpandsAsFarAsLZWCan() async throws {
        var gif = GIFBuilder(width: 3000, height: 3000)
        gif.addFrame(width: 3000, height: 3000, pixels: [UInt8](repeating: 2, count: 3000 * 3000))
        #expect(gif.data.count < 3000 * 3000 / 1000)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(gif.data, named: "expanding.gif", in: directory), "--json"])
        #expect(try run.json()["width"] as? Int == 3000, "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 110 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 10, "\(run.cpuSeconds) s of CPU")
    }

    /// A 60-byte GIF declaring a 6000×6000 screen cost a 144 MB canvas and as much again per
    /// frame. LZW expands at most 2731 pixels a byte, so the file cannot fill it: refused first.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func tinyGIFDeclaringAHugeScreenIsRefused() async throws {
        var gif = GIFBuilder(width: 6000, height: 6000)
        gif.addFrame(width: 1, height: 1, pixels: [1])
        #expect(gif.data.count < 100)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(gif.data, named: "screen.gif", in: directory), "--json"])
        #expect(try run.errorCode() == "tooLarge", "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 32 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 2, "\(run.cpuSeconds) s of CPU")
    }

    /// The same for APNG: the default image must fill the canvas, and deflate expands at most
    /// 8256 pixels a byte (1032:1 at 1 bit a pixel).
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func tinyAPNGDeclaringAHugeCanvasIsRefused() async throws {
        var apng = APNGBuilder(width: 6000, height: 6000)
        try apng.addFrame(try Bitmap(width: 1, height: 1, filledWith: (255, 0, 0, 255)))
        try apng.addFrame(try Bitmap(width: 1, height: 1, filledWith: (0, 0, 255, 255)))
        #expect(apng.data.count < 200)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(apng.data, named: "canvas.png", in: directory), "--json"])
        #expect(try run.errorCode() == "tooLarge", "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 32 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 2, "\(run.cpuSeconds) s of CPU")
    }

    /// Animated WebP: the frame limit holds there too.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func webPWithMoreFramesThanTheLimit() async throws {
        let webp = try Self.webP(side: 1, frames: DecodeOptions.defaultMaxFrameCount + 50)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(webp, named: "frames.webp", in: directory), "--json"])
        #expect(try run.json()["frames"] as? Int == DecodeOptions.defaultMaxFrameCount, "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 40 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 5, "\(run.cpuSeconds) s of CPU")
    }

    /// An animated WebP of two 1×1 frames declaring a 10 000×10 000 canvas (within the default
    /// pixel limit): libwebp's animation decoder allocated two 400 MB canvases and cleared one for
    /// the first frame, and the frame copied out was 400 MB more. Its frames can paint 2 pixels:
    /// refused before the decoder is made.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func tinyAnimatedWebPDeclaringAHugeCanvasIsRefused() async throws {
        let webp = try Self.webP(side: 1, frames: 2, canvas: 10_000)
        #expect(webp.count < 200)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(webp, named: "canvas.webp", in: directory), "--json"])
        #expect(try run.errorCode() == "tooLarge", "\(run.stdout)")
        #expect(run.peakMemoryBytes <= 32 * Self.megabyte, "peak \(run.peakMemoryBytes / Self.megabyte) MB")
        #expect(run.cpuSeconds <= 2, "\(run.cpuSeconds) s of CPU")
    }

    /// The canvas check counts what the frames can paint, not the file's bytes: lossless frames
    /// covering a canvas above the floor in next to no bytes still decode, and so does a canvas
    /// below the floor whatever its frames.
    @Test func animatedWebPWhoseFramesCoverTheCanvasDecodes() throws {
        let solid = try Self.webP(side: 1200, frames: 2)
        #expect(solid.count < 2000)
        let image = try WebPCoder().decode(solid, options: DecodeOptions(maxPixelSize: 16))
        #expect(image.frames.count == 2)
        let small = try Self.webP(side: 1, frames: 2, canvas: 1000)
        #expect(try WebPCoder().decode(small, options: DecodeOptions()).width == 1000)
        let large = try Self.webP(side: 1, frames: 2, canvas: 1100)
        #expect(throws: WebImageError.self) { try WebPCoder().decode(large, options: DecodeOptions()) }
    }

    /// The 1/8-scale JPEG decoder built the lookup tables of every DHT segment as it read it
    /// (about 5000 table entries each), so a file of 300 000 one-code DHT segments (6.6 MB) cost
    /// 1.8 s of CPU before its first scan (13 MB: 3.5 s), where the same picture alone takes
    /// milliseconds. Now a DHT segment's bytes are kept and only
    /// the tables the scan uses are built, as libjpeg builds its derived tables at the scan.
    @Test(.enabled(if: canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func jpegWithHundredsOfThousandsOfHuffmanTables() async throws {
        let photo = try JPEGCoder.encode(try Bitmap(width: 64, height: 48, filledWith: (200, 100, 50, 255)), quality: 85,
                                         sampling: .halfBoth)
        // One AC table of a single 1-bit code, again and again, before the file's own tables.
        let table: [UInt8] = [0xFF, 0xC4, 0x00, 0x14, 0x10, 1] + [UInt8](repeating: 0, count: 15) + [0x01]
        var data = Data(photo.prefix(2))
        data.reserveCapacity(photo.count + table.count * 300_000)
        for _ in 0..<300_000 { data.append(contentsOf: table) }
        data.append(photo.dropFirst(2))
        #expect(data.count < 7 << 20)
        let directory = try TemporaryDirectory()
        let run = try await runMeasured(["decode", try writeSample(data, named: "tables.jpg", in: directory),
                                         "--json", "--max-pixel-size", "8"])
        #expect(try run.json()["width"] as? Int == 8, "\(run.stdout)")
        #expect(run.cpuSeconds <= 0.5, "\(run.cpuSeconds) s of CPU")
    }

    // MARK: - The limits' rule, in process

    enum Format: String, CaseIterable, Sendable { case gif, apng, webp }

    /// `frames` frames of `side` × `side`, alternating red, green and blue, in `format`.
    static func animation(_ format: Format, side: Int, frames: Int) throws -> Data {
        switch format {
        case .gif:
            var gif = GIFBuilder(width: side, height: side)
            for index in 0..<frames {
                gif.addFrame(width: side, height: side, pixels: [UInt8](repeating: UInt8(index % 3 + 1), count: side * side), delay: 5)
            }
            return gif.data
        case .apng:
            var apng = APNGBuilder(width: side, height: side)
            let colors: [(UInt8, UInt8, UInt8, UInt8)] = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)]
            let encoded = try colors.map { try APNGBuilder.imageData(of: try Bitmap(width: side, height: side, filledWith: $0)) }
            for index in 0..<frames { apng.addFrame(data: encoded[index % 3], width: side, height: side) }
            return apng.data
        case .webp:
            return try webP(side: side, frames: frames)
        }
    }

    /// `frames` lossless frames of `side` × `side`; with `canvas`, the VP8X header then declares a
    /// `canvas` × `canvas` canvas the frames sit in the corner of.
    static func webP(side: Int, frames: Int, canvas: Int? = nil) throws -> Data {
        let colors: [(UInt8, UInt8, UInt8, UInt8)] = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)]
        let bitmaps = try colors.map { try Bitmap(width: side, height: side, filledWith: $0) }
        let image = try DecodedImage(frames: (0..<frames).map { ImageFrame(bitmap: bitmaps[$0 % 3], duration: 0.05) },
                                     loopCount: 0, hasAlpha: false)
        var data = try WebPAnimationEncoder.encode(image, options: EncodeOptions(lossless: true))
        if let canvas {
            // RIFF header (12 bytes), then the VP8X chunk: fourcc, size, 4 bytes of flags, then the
            // canvas width and height less one, 24 bits each, little-endian.
            #expect(data[data.startIndex + 12..<data.startIndex + 16].elementsEqual("VP8X".utf8))
            for (offset, value) in [(24, canvas - 1), (27, canvas - 1)] {
                for byte in 0..<3 { data[data.startIndex + offset + byte] = UInt8((value >> (8 * byte)) & 0xFF) }
            }
        }
        return data
    }

    @Test(arguments: Format.allCases)
    func framesPastTheFrameLimitAreNotDecodedAndTheImageSaysSo(_ format: Format) throws {
        let data = try Self.animation(format, side: 1, frames: 30)
        let image = try ImageCodersManager.shared.decode(data, options: DecodeOptions(maxFrameCount: 12))
        #expect(image.frames.count == 12)
        #expect(image.truncation == .frameCount && image.isTruncatedAnimation)
        let whole = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(whole.frames.count == 30 && whole.truncation == nil)
        let unlimited = try ImageCodersManager.shared.decode(data, options: DecodeOptions(maxFrameCount: .max))
        #expect(unlimited.frames.count == 30 && unlimited.truncation == nil)
        let exact = try ImageCodersManager.shared.decode(data, options: DecodeOptions(maxFrameCount: 30))
        #expect(exact.frames.count == 30 && exact.truncation == nil)
        let first = try ImageCodersManager.shared.decode(data, options: DecodeOptions(firstFrameOnly: true, maxFrameCount: 12))
        #expect(first.frames.count == 1 && first.truncation == nil)
    }

    /// Each frame costs its pixels plus a fixed overhead, so a 1×1 animation cannot admit millions
    /// of frames, and the budget is asked before a frame is decoded: the frames kept never pass it.
    @Test(arguments: Format.allCases)
    func perFrameOverheadCountsAndTheBudgetHoldsBeforeDecoding(_ format: Format) throws {
        let data = try Self.animation(format, side: 1, frames: 300)
        let frameCost = 4 + DecodeOptions.frameOverheadBytes
        let limit = 100 * frameCost + frameCost / 2
        let image = try ImageCodersManager.shared.decode(data, options: DecodeOptions(animationByteLimit: limit))
        #expect(image.frames.count == 100)
        #expect(image.truncation == .byteLimit)
        #expect(image.cost + image.frames.count * DecodeOptions.frameOverheadBytes <= limit)
    }

    /// A thumbnail's frames count at their thumbnail size: an animation whose full-size frames
    /// pass the budget fits whole as a thumbnail. Composing full-size frames is still bounded,
    /// by ``DecodeOptions/thumbnailWorkFactor`` × the budget.
    @Test(arguments: Format.allCases)
    func thumbnailFramesCountAtTheirThumbnailSize(_ format: Format) throws {
        let side = 256
        let frameBytes = side * side * 4
        let data = try Self.animation(format, side: side, frames: 20)
        let limit = 4 * frameBytes
        let full = try ImageCodersManager.shared.decode(data, options: DecodeOptions(animationByteLimit: limit))
        #expect(full.frames.count == 3 && full.truncation == .byteLimit)
        let thumbnail = try ImageCodersManager.shared.decode(data, options: DecodeOptions(maxPixelSize: 32, animationByteLimit: limit))
        #expect(thumbnail.frames.count == 16 && thumbnail.truncation == .byteLimit)
        #expect(thumbnail.frames.allSatisfy { $0.bitmap.width == 32 && $0.bitmap.height == 32 })
        let roomy = try ImageCodersManager.shared.decode(data, options: DecodeOptions(maxPixelSize: 32, animationByteLimit: 8 * frameBytes))
        #expect(roomy.frames.count == 20 && roomy.truncation == nil)
        // Each thumbnail is its own frame shrunk, not the first one repeated.
        let colors = roomy.frames.prefix(3).compactMap { $0.bitmap.pixel(x: 16, y: 16).map { [$0.r, $0.g, $0.b] } }
        #expect(Set(colors).count == 3)
    }
}
