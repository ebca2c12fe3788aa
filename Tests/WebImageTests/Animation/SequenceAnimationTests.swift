import Foundation
import Testing
@testable import WebImage

/// AVIF sequences and JPEG XL animations decoded lazily (``AVIFAnimationSource``,
/// ``JXLAnimationSource``): headers without decoding, every frame equal to the whole decode's in
/// any order, thumbnails and colour conversion per frame, the limits, the manager's lazy result,
/// a player within its buffer budget, and damaged files.
@Suite("AVIF and JPEG XL sequences", .serialized, .timeLimit(.minutes(3)))
struct SequenceAnimationTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case avif, jxl
        var testDescription: String { rawValue }
    }

    static let frameCount = 10

    /// `count` frames on a `width` × `height` canvas: a gradient that shifts frame by frame, a
    /// square moving over it, and a translucent band, so frames differ a little from each other
    /// (AV1 codes inter frames) and have alpha. Durations 40, 50, 60... ms.
    static func frames(count: Int = frameCount, width: Int = 64, height: Int = 48) throws -> [ImageFrame] {
        try (0..<count).map { index in
            let bitmap = try Bitmap(width: width, height: height) { buffer in
                for y in 0..<height {
                    for x in 0..<width {
                        let o = (y * width + x) * 4
                        let inSquare = (x - index * 4 + 64) % 64 < 16 && y >= 10 && y < 26
                        buffer[o] = inSquare ? 240 : UInt8((x * 4 + index * 9) & 0xFF)
                        buffer[o + 1] = inSquare ? 30 : UInt8((y * 5 + index * 3) & 0xFF)
                        buffer[o + 2] = UInt8(((x + y) * 3) & 0xFF)
                        buffer[o + 3] = y >= height - 8 ? 128 : 255
                    }
                }
            }
            return ImageFrame(bitmap: bitmap, duration: 0.04 + 0.01 * Double(index))
        }
    }

    /// An animation of ``frames(count:width:height:)`` written by the project's encoder, in
    /// `iccProfile`'s colours when one is given.
    static func sample(_ kind: Kind, count: Int = frameCount, iccProfile: Data? = nil) throws -> Data {
        var image = try DecodedImage(frames: frames(count: count), loopCount: 3, format: kind == .avif ? .avif : .jxl, hasAlpha: true)
        image.iccProfile = iccProfile
        return kind == .avif
            ? try AVIFCoder(encodeSpeed: 10).encode(image, format: .avif, options: EncodeOptions(quality: 0.8))
            : try JXLCoder(encodeEffort: 3).encode(image, format: .jxl, options: EncodeOptions(quality: 0.8))
    }

    static let encodersPresent = AVIFCoder.encoderName != nil

    /// Frames `order` (every frame in order unless given) decoded on demand equal the same frames of the whole decode.
    private func expectFramesMatch(_ data: Data, _ label: String, options: DecodeOptions = DecodeOptions(),
                                   order: [Int]? = nil) throws {
        try LazyAnimationExpectations.framesMatch(data, label, options: options) { order ?? Array(0..<$0) }
    }

    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func headersAloneGiveCountsAndDurations(_ kind: Kind) throws {
        let data = try Self.sample(kind)
        let animation = try #require(try AnimatedImage(data: data))
        #expect(animation.format == (kind == .avif ? .avif : .jxl))
        #expect(animation.frameCount == Self.frameCount)
        #expect(animation.durations.map { ($0 * 1000).rounded() } == (0..<Self.frameCount).map { 40 + 10 * Double($0) })
        // libavif 0.11 reads no repetition count (sequences loop forever); JPEG XL stores one.
        #expect(animation.loopCount == (kind == .avif ? 0 : 3))
        #expect(animation.drawnFrames == 0, "nothing decoded to learn them")
        // Random access asks the library for the frame: one draw, whatever the frame.
        _ = try animation.frame(at: Self.frameCount - 1)
        #expect(animation.drawnFrames == 1)
    }

    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func everyFrameOnDemandEqualsTheWholeDecode(_ kind: Kind) throws {
        let data = try Self.sample(kind)
        let last = Self.frameCount - 1
        // Forwards, then N, N-3 and the last (backwards seeks restart at a key frame inside the
        // library), then the rest backwards.
        try expectFramesMatch(data, "\(kind) in order")
        try expectFramesMatch(data, "\(kind) random", order: [6, 3, last, 0, 7, 4] + Array((0...last).reversed()))
    }

    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func thumbnailsAndColoursApplyPerFrame(_ kind: Kind) throws {
        let p3 = try #require(ColorProfileBuilder.rgbProfile(primaries: .displayP3, transfer: .sRGB))
        let data = try Self.sample(kind, iccProfile: p3)
        let converted = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let kept = try ImageCodersManager.shared.decode(data, options: DecodeOptions(keepsColors: true))
        #expect(converted.frames[2].bitmap.canonicalSHA256() != kept.frames[2].bitmap.canonicalSHA256(),
                "the profile changes the colours, so a missed conversion shows")
        for options in [DecodeOptions(), DecodeOptions(keepsColors: true), DecodeOptions(maxPixelSize: 24),
                        DecodeOptions(maxPixelSize: 24, keepsColors: true)] {
            try expectFramesMatch(data, "\(kind) \(options.maxPixelSize ?? 0) \(options.keepsColors)", options: options,
                                  order: [5, 2, Self.frameCount - 1, 0])
        }
        let lazy = try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions(keepsColors: true))
        // Three expectations, not one: a CI run saw the conjunction fail once for JXL (not reproduced
        // in 8 runs since); apart, a failure says which part.
        #expect(lazy.animation != nil, "\(kind) decodes lazily")
        #expect(kept.iccProfile != nil, "\(kind) keeps its profile")
        #expect(lazy.iccProfile == kept.iccProfile, "\(kind): lazy \(lazy.iccProfile?.count ?? -1) bytes, whole \(kept.iccProfile?.count ?? -1)")
        #expect(try lazy.materialized().frames.map { $0.bitmap.canonicalSHA256() } == kept.frames.map { $0.bitmap.canonicalSHA256() })
    }

    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func displayDecodeIsLazyUnlessFirstFrameOnly(_ kind: Kind) throws {
        let data = try Self.sample(kind)
        let lazy = try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions())
        let animation = try #require(lazy.animation, "\(kind) decodes lazily for display")
        #expect(lazy.frames.count == 1 && lazy.isAnimated && lazy.durations.count == Self.frameCount)
        #expect(lazy.cost == lazy.bitmap.byteCount + animation.bufferBudget)
        let first = try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions(firstFrameOnly: true))
        #expect(first.animation == nil && first.frames.count == 1)
        #expect(first.bitmap.canonicalSHA256() == lazy.bitmap.canonicalSHA256())
        // A still image of the format is no animation.
        let still = try Self.sample(kind, count: 1)
        #expect(try AnimatedImage(data: still) == nil)
        #expect(try ImageCodersManager.shared.decodeForDisplay(still, options: DecodeOptions()).animation == nil)
    }

    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func limitsHoldBeforeDecoding(_ kind: Kind) throws {
        let data = try Self.sample(kind)
        let limited = try #require(try AnimatedImage(data: data, options: DecodeOptions(maxFrameCount: 4)))
        #expect(limited.frameCount == 4)
        #expect(limited.truncation == .frameCount)
        #expect(limited.drawnFrames == 0)
        #expect(throws: WebImageError.self) { try limited.frame(at: 4) }
        let whole = try ImageCodersManager.shared.decode(data, options: DecodeOptions(maxFrameCount: 4))
        #expect(whole.frames.count == 4 && whole.truncation == .frameCount, "the whole decode stops at the same frame")
        #expect(throws: WebImageError.tooLarge("64×48 is over the limit of 1000 pixels")) {
            _ = try AnimatedImage(data: data, options: DecodeOptions(pixelLimit: 1000))
        }
    }

    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func playerBufferStaysWithinItsBudget(_ kind: Kind) async throws {
        let data = try Self.sample(kind)
        let whole = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let animation = try #require(try AnimatedImage(data: data))
        let frameBytes = animation.frameByteCount
        let (player, _, shown) = try await LazyAnimationExpectations.playOnceInThreeFrames(animation)
        #expect(player.statistics.peakBufferBytes == 3 * frameBytes)
        #expect(player.statistics.shown == Self.frameCount)
        #expect(shown == whole.frames.map { $0.bitmap.canonicalSHA256() }, "the player shows the whole decode's frames")
        for index in [7, 4, Self.frameCount - 1, 1] {
            player.seek(toFrame: index)
            await player.waitUntilPrefetched()
            #expect(player.currentFrame?.bitmap.canonicalSHA256() == whole.frames[index].bitmap.canonicalSHA256(), "seek to \(index)")
        }
    }

    /// Cut and corrupted sequences: the headers are refused with a ``WebImageError`` or read, and
    /// then every listed frame decodes or throws one; nothing traps.
    @Test(.enabled(if: encodersPresent, "libavif has no AV1 encoder"), arguments: Kind.allCases)
    func damagedSequencesFailWithTypedErrors(_ kind: Kind) throws {
        let sample = try Self.sample(kind, count: 6)
        var damaged: [Data] = stride(from: 8, to: sample.count, by: max(1, sample.count / 30)).map { Data(sample.prefix($0)) }
        for position in stride(from: 12, to: sample.count, by: max(1, sample.count / 30)) {
            var flipped = sample
            flipped[flipped.startIndex + position] ^= 0x5A
            damaged.append(flipped)
        }
        var read = 0
        for data in damaged {
            do {
                guard let animation = try AnimatedImage(data: data) else { continue }
                read += 1
                for index in [0, animation.frameCount - 1, 1] where index < animation.frameCount {
                    do { _ = try animation.frame(at: index) } catch is WebImageError {}
                }
            } catch is WebImageError {}
        }
        #expect(damaged.count > 40 && read > 0)
    }
}
