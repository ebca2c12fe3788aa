import Foundation
import Testing
import WebImage

/// The GIF encoder through the public coder manager: round trips through our giflib decoder and
/// through Pillow (the oracle; skipped when `/usr/bin/python3` has no PIL). Images of at most 256
/// colours per frame come back exactly; a photo-like image within a mean absolute error of
/// ``photoTolerance`` per channel. Transparency is alpha < 128 → transparent, else opaque.
@Suite struct GIFEncoderTests {
    /// The mean absolute error per channel a 256-colour median cut may leave on the photo-like
    /// pictures below (their ±8 grain alone is far more than 256 colours; measured 4.35 without dithering).
    static let photoTolerance = 6.0

    static func encode(_ image: DecodedImage, firstFrameOnly: Bool = false) throws -> Data {
        try ImageCodersManager.shared.encode(image, format: .gif, options: EncodeOptions(firstFrameOnly: firstFrameOnly))
    }

    static func decode(_ data: Data) throws -> DecodedImage {
        try ImageCodersManager.shared.decode(data, options: DecodeOptions())
    }

    static func bitmap(width: Int, height: Int, _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) throws -> Bitmap {
        try Bitmap(width: width, height: height) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let p = pixel(x, y), offset = (y * width + x) * 4
                    buffer[offset] = p.0; buffer[offset + 1] = p.1; buffer[offset + 2] = p.2; buffer[offset + 3] = p.3
                }
            }
        }
    }

    /// 200 distinct opaque colours in 10×10 tiles.
    static func tiles(width: Int = 64, height: Int = 48, shift: Int = 0) throws -> Bitmap {
        try bitmap(width: width, height: height) { x, y in
            let tile = ((x / 4 + shift) * 7 + (y / 4) * 13) % 200
            return (UInt8(tile), UInt8((tile * 37) % 256), UInt8(255 - tile), 255)
        }
    }

    /// A photo-like picture: smooth gradients, a disc and fixed pseudo-random grain, far more
    /// than 256 colours.
    static func photoLike(width: Int = 192, height: Int = 144, seed: UInt32 = 1) throws -> Bitmap {
        var state = seed
        return try bitmap(width: width, height: height) { x, y in
            state = state &* 1_664_525 &+ 1_013_904_223
            let grain = Int(state >> 28) - 8
            let dx = x - width / 2, dy = y - height / 3
            let inDisc = dx * dx + dy * dy < (height / 4) * (height / 4)
            let r = inDisc ? 230 - y / 2 : x * 255 / width
            let g = inDisc ? 120 + x / 4 : y * 200 / height + 30
            let b = inDisc ? 40 : 255 - (x + y) * 255 / (width + height)
            func clamp(_ v: Int) -> UInt8 { UInt8(min(255, max(0, v + grain))) }
            return (clamp(r), clamp(g), clamp(b), 255)
        }
    }

    /// The bitmap as a GIF shows it: alpha < 128 transparent (all zero), the rest opaque.
    static func thresholded(_ bitmap: Bitmap) throws -> Bitmap {
        try bitmap.withUnsafeBytes { source in
            try Bitmap(width: bitmap.width, height: bitmap.height) { buffer in
                var index = 0
                while index < source.count {
                    let opaque = source[index + 3] >= 128
                    for channel in 0..<3 { buffer[index + channel] = opaque ? source[index + channel] : 0 }
                    buffer[index + 3] = opaque ? 255 : 0
                    index += 4
                }
            }
        }
    }

    // MARK: - Our decoder

    @Test func fewColorStillIsExactAndRegistered() throws {
        #expect(ImageCodersManager.shared.canEncode(.gif))
        let source = try Self.tiles()
        let data = try Self.encode(DecodedImage(bitmap: source, hasAlpha: false))
        #expect(ImageFormat.detect(data) == .gif)
        let decoded = try Self.decode(data)
        #expect(decoded.frames.count == 1 && decoded.loopCount == 1)
        #expect(PixelDifference.maximum(decoded.bitmap, source) == 0)
    }

    /// Frames (81 colours each), delays and the loop count come back; a moving part exercises the
    /// frames written as the changed rectangle only.
    @Test(arguments: [0, 1, 3])
    func animationRoundTrips(loopCount: Int) throws {
        let durations = [0.1, 0.25, 0.5, 1.0, 0.04]
        let frames = try durations.enumerated().map { index, duration in
            ImageFrame(bitmap: try Self.bitmap(width: 60, height: 40) { x, y in
                let inSquare = (index * 10..<index * 10 + 8).contains(x) && (10..<18).contains(y)
                return inSquare ? (255, UInt8(index * 50), 0, 255) : (UInt8(x / 6 * 20), UInt8(y / 5 * 25), 100, 255)
            }, duration: duration)
        }
        let source = try DecodedImage(frames: frames, loopCount: loopCount, hasAlpha: false)
        let decoded = try Self.decode(try Self.encode(source))
        #expect(decoded.frames.count == frames.count)
        #expect(decoded.durations == durations)
        #expect(decoded.loopCount == loopCount)
        for (index, (ours, theirs)) in zip(decoded.frames, frames).enumerated() {
            #expect(PixelDifference.maximum(ours.bitmap, theirs.bitmap) == 0, "frame \(index)")
        }
        // Only the first frame when asked.
        let first = try Self.decode(try Self.encode(source, firstFrameOnly: true))
        #expect(first.frames.count == 1 && PixelDifference.maximum(first.bitmap, frames[0].bitmap) == 0)
    }

    /// Frames whose transparency changes: a region opaque in one frame and transparent in the
    /// next must not keep the old pixels, and alpha between is cut at 128.
    static func transparentAnimation() throws -> DecodedImage {
        let frames = try (0..<4).map { index in
            ImageFrame(bitmap: try Self.bitmap(width: 40, height: 30) { x, y in
                let hole = (index * 8..<index * 8 + 12).contains(x)
                if hole { return (9, 9, 9, y < 15 ? 0 : 100) }
                return (UInt8(x / 5 * 30), UInt8(index * 60), UInt8(y / 5 * 40), y == 0 ? 130 : 255)
            }, duration: 0.2)
        }
        return try DecodedImage(frames: frames, loopCount: 0, hasAlpha: true)
    }

    @Test func transparencyRoundTrips() throws {
        let source = try Self.transparentAnimation()
        let decoded = try Self.decode(try Self.encode(source))
        #expect(decoded.frames.count == 4 && decoded.hasAlpha)
        for (index, (ours, theirs)) in zip(decoded.frames, source.frames).enumerated() {
            #expect(PixelDifference.maximum(ours.bitmap, try Self.thresholded(theirs.bitmap)) == 0, "frame \(index)")
        }
        let still = try Self.decode(try Self.encode(DecodedImage(bitmap: source.frames[1].bitmap, hasAlpha: true)))
        #expect(PixelDifference.maximum(still.bitmap, try Self.thresholded(source.frames[1].bitmap)) == 0)
    }

    @Test func photoLikeImageWithinTolerance() throws {
        let source = try Self.photoLike()
        let data = try Self.encode(DecodedImage(bitmap: source, hasAlpha: false))
        let decoded = try Self.decode(data)
        let error = try #require(PixelDifference.mean(decoded.bitmap, source))
        #expect(error <= Self.photoTolerance, "mean absolute error \(error)")
        // Deterministic: the same pixels give the same bytes.
        #expect(try Self.encode(DecodedImage(bitmap: source, hasAlpha: false)) == data)
        // An animation of photo-like frames keeps its frames within the same tolerance.
        let frames = try (1...3).map { ImageFrame(bitmap: try Self.photoLike(seed: UInt32($0)), duration: 0.1) }
        let animation = try Self.decode(try Self.encode(DecodedImage(frames: frames, hasAlpha: false)))
        #expect(animation.frames.count == 3)
        for (index, (ours, theirs)) in zip(animation.frames, frames).enumerated() {
            let error = try #require(PixelDifference.mean(ours.bitmap, theirs.bitmap))
            #expect(error <= Self.photoTolerance, "frame \(index): \(error)")
        }
    }

    /// Real animated GIFs (the shared corpus) decoded, encoded and decoded again: every frame the
    /// same, with their delays and loop counts.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason),
          arguments: ["gif/gif-test-suite/animated_loop.gif", "gif/gif-test-suite/animated_noloop.gif",
                      "gif/gif-test-suite/animated_transparent_frame_restorebackground_loop.gif",
                      "gif/gif-test-suite/animated_transparent_loop_frames_out_of_bounds.gif",
                      "gif/wuffs/animated-red-blue.gif", "gif/sdwebimage/TestLoopCount.gif"])
    func corpusAnimationsRoundTrip(path: String) throws {
        let root = try #require(Corpus.root)
        let original = try Self.decode(try Data(contentsOf: root.appendingPathComponent(path)))
        let again = try Self.decode(try Self.encode(original))
        #expect(again.frames.count == original.frames.count)
        #expect(again.durations == original.durations)
        #expect(again.loopCount == original.loopCount)
        for (index, (ours, theirs)) in zip(again.frames, original.frames).enumerated() {
            #expect(PixelDifference.maximum(ours.bitmap, try Self.thresholded(theirs.bitmap)) == 0, "\(path) frame \(index)")
        }
    }

    // MARK: - Pillow

    /// What Pillow reads: frame count, loop (`nil` when absent), durations in ms, RGBA frames.
    struct PillowAnimation {
        var loop: Int?
        var durations: [Int]
        var frames: [Bitmap]
    }

    static func pillowRead(_ data: Data) throws -> PillowAnimation {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gif-\(UUID().uuidString).gif")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            frames, durations = [], []
            for index in range(im.n_frames):
                im.seek(index)
                durations.append(str(im.info.get("duration", 0)))
                frames.append(im.convert("RGBA").tobytes())
            loop = im.info.get("loop")
            sys.stdout.buffer.write(b"OK %d %d %d %s %s\\n" % (im.width, im.height, len(frames),
                                    b"-" if loop is None else str(loop).encode(), ",".join(durations).encode()))
            sys.stdout.buffer.write(b"".join(frames))
            """
        let result = try PillowOracle.run(["-c", script, file.path])
        try #require(result.status == 0 && result.output.starts(with: Array("OK ".utf8)), "Pillow refused the GIF")
        let newline = try #require(result.output.firstIndex(of: 0x0A))
        let fields = String(decoding: result.output[3..<newline], as: UTF8.self).split(separator: " ").map(String.init)
        try #require(fields.count == 5)
        let width = try #require(Int(fields[0])), height = try #require(Int(fields[1])), count = try #require(Int(fields[2]))
        let pixels = Array(result.output[(newline + 1)...])
        let size = width * height * 4
        try #require(pixels.count == size * count)
        let frames = try (0..<count).map { index in
            try Bitmap(width: width, height: height) { buffer in
                buffer.copyBytes(from: pixels[(index * size)..<((index + 1) * size)])
            }
        }
        return PillowAnimation(loop: Int(fields[3]), durations: fields[4].split(separator: ",").compactMap { Int(Double($0) ?? -1) },
                               frames: frames)
    }

    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func pillowReadsAnimations() throws {
        let durations = [0.1, 0.3, 0.05]
        let opaque = try durations.enumerated().map { index, duration in
            ImageFrame(bitmap: try Self.tiles(shift: index * 3), duration: duration)
        }
        for (source, loop) in [(try DecodedImage(frames: opaque, loopCount: 0, hasAlpha: false), 0 as Int?),
                               (try DecodedImage(frames: opaque, loopCount: 5, hasAlpha: false), 5),
                               (try DecodedImage(frames: opaque, loopCount: 1, hasAlpha: false), nil),
                               (try Self.transparentAnimation(), 0)] {
            let pillow = try Self.pillowRead(try Self.encode(source))
            #expect(pillow.frames.count == source.frames.count)
            #expect(pillow.loop == loop)
            #expect(pillow.durations == source.frames.map { Int(($0.duration * 1000).rounded()) })
            for (index, (theirs, ours)) in zip(pillow.frames, source.frames).enumerated() {
                #expect(PixelDifference.maximum(theirs, try Self.thresholded(ours.bitmap)) == 0, "frame \(index)")
            }
        }
        let photo = try Self.photoLike()
        let pillow = try Self.pillowRead(try Self.encode(DecodedImage(bitmap: photo, hasAlpha: false)))
        let first = try #require(pillow.frames.first)
        let error = try #require(PixelDifference.mean(first, photo))
        #expect(pillow.frames.count == 1 && error <= Self.photoTolerance, "mean absolute error \(error)")
    }

    // MARK: - Hostile sizes and values

    /// Sides over GIF's 65535 are refused before any frame is quantised; frames of different
    /// sizes are refused; delays that are not finite or do not fit 16 bits are clamped, not trapped on.
    @Test func hostileSizesAndValues() throws {
        for (width, height) in [(65536, 1), (1, 65536), (70_000, 2)] {
            let image = DecodedImage(bitmap: try Bitmap(width: width, height: height, filledWith: (1, 2, 3, 255)), hasAlpha: false)
            let error = #expect(throws: WebImageError.self) { try Self.encode(image) }
            guard case .tooLarge? = error else {
                Issue.record("\(width)×\(height): \(String(describing: error)) is not tooLarge")
                continue
            }
        }
        let mixed = try DecodedImage(frames: [ImageFrame(bitmap: try Self.tiles(), duration: 0.1),
                                              ImageFrame(bitmap: try Self.tiles(width: 32), duration: 0.1)], hasAlpha: false)
        let error = #expect(throws: WebImageError.self) { try Self.encode(mixed) }
        if case .encodingFailed? = error {} else { Issue.record("\(String(describing: error)) is not encodingFailed") }
        let odd = try DecodedImage(frames: [Double.nan, .infinity, -1, 1e9, 655.35].map {
            ImageFrame(bitmap: try Self.tiles(), duration: $0)
        }, loopCount: 1_000_000, hasAlpha: false)
        let decoded = try Self.decode(try Self.encode(odd))
        #expect(decoded.durations == [0, 0, 0, 655.35, 655.35])
        #expect(decoded.loopCount == 65535)
    }
}
