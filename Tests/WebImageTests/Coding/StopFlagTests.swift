#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import WebImage
import WebImageDemo

/// The stop flag a server's render carries into the codecs and the resampler: set, the work ends
/// at its next band of rows or frame with ``WebImageError/cancelled``; present but not set, it
/// makes the same pixels as without one.
@Suite("Codecs and the resampler stop on their options' stop flag")
struct StopFlagTests {
    private static func bytes(_ bitmap: Bitmap) -> [UInt8] { bitmap.withUnsafeBytes { Array($0) } }

    private static func set() -> StopFlag {
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        return StopFlag(cancellation)
    }

    private static let picture = DecodedImage(bitmap: try! SampleImages.quadrants(width: 300, height: 200, transparentCenter: true),
                                              hasAlpha: true)

    private static let animation: DecodedImage = try! DecodedImage(frames: (0..<4).map { index in
        ImageFrame(bitmap: try Bitmap(width: 40, height: 30, filledWith: (UInt8(index * 60), 90, 200, 255)), duration: 0.1)
    }, loopCount: 0, hasAlpha: false)

    @Test(arguments: [false, true]) func aPNGDecodedRowByRowHasThePixelsOfTheWholeDecode(interlaced: Bool) throws {
        let png = try ImageCodersManager.shared.encode(Self.picture, format: .png, options: EncodeOptions(progressive: interlaced))
        let whole = try ImageCodersManager.shared.decode(png, options: DecodeOptions())
        var options = DecodeOptions()
        options.stop = StopFlag(DecodeCancellation())
        let rows = try ImageCodersManager.shared.decode(png, options: options)
        #expect(Self.bytes(rows.bitmap) == Self.bytes(whole.bitmap))
    }

    @Test func aPNGDecodeStopsOnItsFlag() throws {
        let png = try ImageCodersManager.shared.encode(Self.picture, format: .png, options: EncodeOptions())
        var options = DecodeOptions()
        options.stop = Self.set()
        #expect(throws: WebImageError.cancelled) { try ImageCodersManager.shared.decode(png, options: options) }
    }

    @Test(arguments: [ImageFormat.gif, .webp]) func anAnimationDecodeStopsOnItsFlag(format: ImageFormat) throws {
        let data = try ImageCodersManager.shared.encode(Self.animation, format: format, options: EncodeOptions(lossless: true))
        var options = DecodeOptions()
        options.stop = Self.set()
        #expect(throws: WebImageError.cancelled) { try ImageCodersManager.shared.decode(data, options: options) }
        // Without it, every frame.
        #expect(try ImageCodersManager.shared.decode(data, options: DecodeOptions()).frames.count == 4)
    }

    @Test(arguments: [ImageFormat.gif, .webp, .avif, .jxl]) func anAnimationEncodeStopsOnItsFlag(format: ImageFormat) throws {
        guard ImageCodersManager.shared.canEncode(format) else { return }
        var options = EncodeOptions(quality: 0.8)
        options.stop = Self.set()
        #expect(throws: WebImageError.cancelled) { try ImageCodersManager.shared.encode(Self.animation, format: format, options: options) }
    }

    @Test(arguments: [Int.max, 0]) func aResizeStopsOnItsFlagOnOneThreadOrTwo(twoThreadsFrom: Int) throws {
        #expect(throws: WebImageError.cancelled) {
            try Resampler.resize(Self.picture.bitmap, width: 120, height: 80, filter: .lanczos3, twoThreadsFrom: twoThreadsFrom, stop: Self.set())
        }
        let flagged = try Resampler.resize(Self.picture.bitmap, width: 120, height: 80, filter: .lanczos3, twoThreadsFrom: twoThreadsFrom,
                                           stop: StopFlag(DecodeCancellation()))
        let plain = try Resampler.resize(Self.picture.bitmap, width: 120, height: 80, filter: .lanczos3, twoThreadsFrom: twoThreadsFrom)
        #expect(Self.bytes(flagged) == Self.bytes(plain))
    }
}
