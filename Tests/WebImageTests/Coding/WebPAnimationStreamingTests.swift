#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import WebImage

/// A lazily decoded animation encoded to animated WebP is decoded, transformed and encoded frame
/// by frame: the same frames as encoding the whole decode, without holding them all.
@Suite("Animated WebP encodes a lazy animation frame by frame")
struct WebPAnimationStreamingTests {
    private static let gif: Data = try! {
        var frames: [ImageFrame] = []
        for index in 0..<6 {
            let red = UInt8(index * 40), blue = UInt8(250 - index * 30)
            let bitmap = try Bitmap(width: 30, height: 20, filledWith: (red, 120, blue, 255))
            frames.append(ImageFrame(bitmap: bitmap, duration: 0.05 * Double(index + 1)))
        }
        return try ImageCodersManager.shared.encode(try DecodedImage(frames: frames, loopCount: 3, hasAlpha: false),
                                                    format: .gif, options: EncodeOptions())
    }()

    private static func frames(_ data: Data) throws -> [([UInt8], Double)] {
        try ImageCodersManager.shared.decode(data, options: DecodeOptions()).frames.map { ($0.bitmap.withUnsafeBytes { Array($0) }, $0.duration) }
    }

    @Test func theStreamedEncodeHasTheFramesOfTheWholeOne() throws {
        let resize = ResizeTransformer(width: 15, height: 10, mode: .fill)
        let lazy = try ImageCodersManager.shared.decodeForDisplay(Self.gif, options: DecodeOptions()).applying(resize)
        #expect(lazy.animation != nil, "the GIF is decoded lazily")
        let whole = try resize.transform(try ImageCodersManager.shared.decode(Self.gif, options: DecodeOptions()))
        let options = EncodeOptions(lossless: true)
        let streamed = try ImageCodersManager.shared.encode(lazy, format: .webp, options: options)
        let held = try ImageCodersManager.shared.encode(whole, format: .webp, options: options)
        let streamedFrames = try Self.frames(streamed), heldFrames = try Self.frames(held)
        #expect(streamedFrames.count == 6)
        #expect(streamedFrames.map(\.0) == heldFrames.map(\.0))
        #expect(streamedFrames.map(\.1) == heldFrames.map(\.1))
        #expect(try ImageInfo.read(from: streamed).frames == 6)
    }

    @Test func aLazyAnimationStillEncodesToFormatsThatHoldEveryFrame() throws {
        let lazy = try ImageCodersManager.shared.decodeForDisplay(Self.gif, options: DecodeOptions())
        let gif = try ImageCodersManager.shared.encode(lazy, format: .gif, options: EncodeOptions())
        #expect(try Self.frames(gif).count == 6)
    }
}
