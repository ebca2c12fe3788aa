import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Animated WebP through libwebp's `WebPAnimEncoder`, which takes frames one at a time: a lazily
/// decoded animation (``DecodedImage/animation``) is decoded, transformed and encoded frame by
/// frame, one frame in memory at a time beside the encoder's canvases.
enum WebPAnimationEncoder {
    static func encode(_ image: DecodedImage, options: EncodeOptions) throws -> Data {
        guard let animation = image.animation else {
            return try encode(width: image.width, height: image.height, loopCount: image.loopCount, options: options) { index in
                index < image.frames.count ? image.frames[index] : nil
            }
        }
        // The frames a whole decode would keep (the same budget), each dropped once encoded.
        var cursor = try animation.makeCursor()
        var budget = AnimationBudget(options: animation.options, canvasWidth: animation.canvasWidth,
                                     canvasHeight: animation.canvasHeight, kept: animation.frameSize)
        return try encode(width: image.width, height: image.height, loopCount: image.loopCount, options: options) { index in
            guard index < animation.frameCount, try budget.admitFrame() else { return nil }
            return try animation.render(index, with: &cursor)
        }
    }

    /// Encodes the frames `nextFrame` gives for 0, 1, 2... until it gives `nil`.
    private static func encode(width: Int, height: Int, loopCount: Int, options: EncodeOptions,
                               nextFrame: (Int) throws -> ImageFrame?) throws -> Data {
        var encoderOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0 else { throw WebImageError.encodingFailed("WebP version") }
        encoderOptions.anim_params.loop_count = Int32(loopCount)
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &encoderOptions) else {
            throw WebImageError.encodingFailed("WebP: cannot create the animation encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw WebImageError.encodingFailed("WebP config") }
        config.lossless = options.lossless ? 1 : 0
        config.quality = Float(min(1, max(0, options.quality)) * 100)
        var timestamp: Int32 = 0
        var index = 0
        while let frame = try nextFrame(index) {
            index += 1
            try options.stop.check()
            guard frame.bitmap.width == width, frame.bitmap.height == height else {
                throw WebImageError.encodingFailed("WebP: frame \(index - 1) is \(frame.bitmap.width)×\(frame.bitmap.height), not \(width)×\(height)")
            }
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw WebImageError.encodingFailed("WebP picture") }
            picture.use_argb = 1
            picture.width = Int32(frame.bitmap.width)
            picture.height = Int32(frame.bitmap.height)
            defer { WebPPictureFree(&picture) }
            let imported = frame.bitmap.withUnsafeBytes { bytes in
                WebPPictureImportRGBA(&picture, bytes.bindMemory(to: UInt8.self).baseAddress, Int32(frame.bitmap.bytesPerRow))
            }
            guard imported != 0, WebPAnimEncoderAdd(encoder, &picture, timestamp, &config) != 0 else {
                throw WebImageError.encodingFailed("WebP: cannot add a frame")
            }
            timestamp += Int32((frame.duration * 1000).rounded())
        }
        guard WebPAnimEncoderAdd(encoder, nil, timestamp, nil) != 0 else { throw WebImageError.encodingFailed("WebP: finish") }
        var output = WebPData()
        guard WebPAnimEncoderAssemble(encoder, &output) != 0, let bytes = output.bytes else {
            throw WebImageError.encodingFailed("WebP: assemble")
        }
        defer { WebPDataClear(&output) }
        return Data(bytes: bytes, count: output.size)
    }
}
