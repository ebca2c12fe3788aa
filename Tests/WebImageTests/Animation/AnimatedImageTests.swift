import Foundation
import Testing
@testable import WebImage

/// `AnimatedImage`: headers without decoding, random access equal to the whole decode for every
/// frame, key frames, disposal and blending out of order, and the limits.
@Suite("Animated image", .serialized, .timeLimit(.minutes(2)))
struct AnimatedImageTests {
    /// The corpus's animations in the formats with lazy decoding (among the AVIF sequences, a
    /// fuzzer's file whose second frame fails when libavif seeks to it as a key frame).
    static var corpusAnimations: [String] {
        Corpus.names { _, entry in
            !entry.expectsError && (entry.frame_count ?? 1) > 1 && ["GIF", "PNG", "WEBP", "AVIF"].contains(entry.format ?? "")
        }
    }

    /// Every frame decoded on demand, in a scrambled order, equals the same frame of the whole decode.
    private func expectEveryFrameMatches(_ data: Data, _ label: String, options: DecodeOptions = DecodeOptions()) throws {
        try LazyAnimationExpectations.framesMatch(data, label, options: options) { count in
            // A few jumps backwards (each starts over at a key frame), then every frame forwards in
            // two interleaved passes (each going on from the frame before or jumping back).
            Array(stride(from: count - 1, through: 0, by: -max(1, count / 4)))
                + Array(0..<count).filter { $0 % 3 == 1 } + Array(0..<count).filter { $0 % 3 != 1 }
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason), arguments: corpusAnimations)
    func corpusFramesOnDemandEqualTheWholeDecode(_ name: String) throws {
        try expectEveryFrameMatches(try Corpus.data(name), name)
    }

    @Test(.enabled(if: AnimationSamples.pillowAvailable, "Pillow is not installed for /usr/bin/python3"),
          arguments: ["gif-dispose", "apng-dispose-blend", "webp-mixed", "webp-blend"])
    func disposeAndBlendModesOnRandomAccess(_ name: String) throws {
        let data = try #require(AnimationSamples.pillowFiles[name])
        try expectEveryFrameMatches(data, name)
        try expectEveryFrameMatches(data, name + " thumbnail", options: DecodeOptions(maxPixelSize: 20))
    }

    @Test func webPBlendAndDisposeFlagsOnRandomAccess() throws {
        let data = try AnimationSamples.flaggedWebP()
        let source = try WebPAnimationSource(data: data, options: DecodeOptions())
        #expect(source.frames.count == 8)
        #expect(source.frames.filter(\.isKeyFrame).count < 8, "some frames blend onto earlier ones")
        try expectEveryFrameMatches(data, "flagged WebP")
        try expectEveryFrameMatches(data, "flagged WebP thumbnail", options: DecodeOptions(maxPixelSize: 17))
    }

    @Test(.enabled(if: AnimationSamples.pillowAvailable, "Pillow is not installed for /usr/bin/python3"))
    func theSamplesUseEveryMode() throws {
        // The modes the random-access test is meant to cover are really in the files.
        let apng = try #require(AnimationSamples.pillowFiles["apng-dispose-blend"])
        let source = try #require(try APNGDecoder(data: apng, options: DecodeOptions()))
        let disposals = Set(source.frames.dropFirst().map { info -> String in
            switch info.disposal { case .keep: "keep"; case .clear: "clear"; case .restorePrevious: "previous" }
        })
        #expect(disposals == ["keep", "clear", "previous"])
        let gif = try GIFAnimationSource(data: try #require(AnimationSamples.pillowFiles["gif-dispose"]), options: DecodeOptions())
        #expect(gif.frames.contains { $0.disposal == .restorePrevious } && gif.frames.contains { if case .clear = $0.disposal { true } else { false } })
        let webp = try WebPAnimationSource(data: try #require(AnimationSamples.pillowFiles["webp-mixed"]), options: DecodeOptions())
        #expect(webp.frames.dropFirst().contains { $0.isKeyFrame } && webp.frames.contains { !$0.isKeyFrame })
    }

    @Test func headersAloneGiveCountsAndDurations() throws {
        let data = try AnimationSamples.movingSquareAPNG(width: 200, height: 120, frames: 40, delay: 0.05)
        let animation = try #require(try AnimatedImage(data: data))
        #expect(animation.frameCount == 40)
        #expect(animation.durations == Array(repeating: 0.05, count: 40))
        #expect(animation.loopCount == 0)
        #expect(animation.drawnFrames == 0, "nothing decoded to learn them")
    }

    @Test func randomAccessStartsAtTheNearestKeyFrame() throws {
        // Frames 1... blend onto the gradient: no key frame after 0, so frame 30 draws 0...30.
        let data = try AnimationSamples.movingSquareAPNG(width: 160, height: 100, frames: 40)
        let animation = try #require(try AnimatedImage(data: data))
        _ = try animation.frame(at: 30)
        #expect(animation.drawnFrames == 31)
        _ = try animation.frame(at: 32)
        #expect(animation.drawnFrames == 33, "going on from frame 30, not starting over")
        // An animation of full, opaque frames is all key frames: any frame costs one draw.
        let frames = try (0..<6).map { index in
            ImageFrame(bitmap: try Bitmap(width: 24, height: 16, filledWith: (UInt8(index * 40), 10, 200, 255)), duration: 0.1)
        }
        let webp = try ImageCodersManager.shared.encode(try DecodedImage(frames: frames, loopCount: 0, hasAlpha: false),
                                                        format: .webp, options: EncodeOptions(lossless: true))
        let keyed = try #require(try AnimatedImage(data: webp))
        #expect((0..<6).allSatisfy(keyed.isKeyFrame))
        _ = try keyed.frame(at: 5)
        _ = try keyed.frame(at: 2)
        #expect(keyed.drawnFrames == 2)
    }

    @Test func limitsHoldBeforeDecoding() throws {
        let data = try AnimationSamples.movingSquareAPNG(width: 200, height: 120, frames: 30)
        let limited = try #require(try AnimatedImage(data: data, options: DecodeOptions(maxFrameCount: 10)))
        #expect(limited.frameCount == 10)
        #expect(limited.truncation == .frameCount)
        #expect(throws: WebImageError.self) { try limited.frame(at: 10) }
        #expect(throws: WebImageError.tooLarge("200×120 is over the limit of 1000 pixels")) {
            _ = try AnimatedImage(data: data, options: DecodeOptions(pixelLimit: 1000))
        }
        #expect(try AnimatedImage(data: try ImageCodersManager.shared.encode(
            DecodedImage(bitmap: try Bitmap(width: 4, height: 4, filledWith: (1, 2, 3, 255)), hasAlpha: false),
            format: .png, options: EncodeOptions())) == nil, "a still PNG is no animation")
    }

    /// Cut and corrupted animations of every format: the headers are refused with a
    /// ``WebImageError`` or read, and then every listed frame decodes or throws one; nothing traps.
    @Test func damagedAnimationsFailWithTypedErrors() throws {
        var samples = [try AnimationSamples.flaggedWebP(), try AnimationSamples.movingSquareAPNG(width: 60, height: 40, frames: 8)]
        samples += ["gif-dispose", "webp-blend"].compactMap { AnimationSamples.pillowFiles[$0] }
        var attempts = 0
        for sample in samples {
            var damaged: [Data] = stride(from: 8, to: sample.count, by: max(1, sample.count / 40)).map { Data(sample.prefix($0)) }
            for position in stride(from: 12, to: sample.count, by: max(1, sample.count / 40)) {
                var flipped = sample
                flipped[flipped.startIndex + position] ^= 0x5A
                damaged.append(flipped)
            }
            for data in damaged {
                attempts += 1
                do {
                    guard let animation = try AnimatedImage(data: data) else { continue }
                    for index in 0..<animation.frameCount {
                        do { _ = try animation.frame(at: index) } catch is WebImageError {}
                    }
                } catch is WebImageError {}
            }
        }
        #expect(attempts > 200)
    }

    @Test func transformersApplyPerFrameWhenDecoded() throws {
        let data = try AnimationSamples.movingSquareAPNG(width: 160, height: 100, frames: 12)
        let animation = try #require(try AnimatedImage(data: data))
        let resized = try animation.transformed(by: ResizeTransformer(width: 40, height: 25, mode: .fill))
        #expect(animation.drawnFrames == 0 && resized.drawnFrames == 0, "nothing decoded by transforming")
        let whole = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let expected = try ResizeTransformer(width: 40, height: 25, mode: .fill).transform(try whole.replacingFrames([whole.frames[7]]))
        #expect(try resized.frame(at: 7).bitmap.canonicalSHA256() == expected.bitmap.canonicalSHA256())
    }

    @Test func displayDecodeIsLazyUnlessFirstFrameOnly() throws {
        let data = try AnimationSamples.movingSquareAPNG(width: 160, height: 100, frames: 12)
        let lazy = try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions())
        let animation = try #require(lazy.animation)
        #expect(lazy.frames.count == 1 && lazy.isAnimated && lazy.durations.count == 12)
        #expect(lazy.cost == lazy.bitmap.byteCount + animation.bufferBudget)
        #expect(animation.bufferBudget < 12 * lazy.bitmap.byteCount || animation.bufferBudget == 12 * lazy.bitmap.byteCount)
        let first = try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions(firstFrameOnly: true))
        #expect(first.animation == nil && first.frames.count == 1)
        // Encoding a lazy animation encodes every frame.
        let encoded = try ImageCodersManager.shared.encode(lazy, format: .webp, options: EncodeOptions(lossless: true))
        #expect(try ImageCodersManager.shared.decode(encoded, options: DecodeOptions()).frames.count == 12)
    }
}

extension AnimatedImage {
    /// Frames the on-demand reader has drawn so far (kept or passed through).
    var drawnFrames: Int { readerFramesDrawn }
}
