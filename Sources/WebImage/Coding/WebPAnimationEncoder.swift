import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Animated WebP through libwebp's `WebPAnimEncoder`.
enum WebPAnimationEncoder {
    static func encode(_ image: DecodedImage, options: EncodeOptions) throws -> Data {
        var encoderOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0 else { throw WebImageError.encodingFailed("WebP version") }
        encoderOptions.anim_params.loop_count = Int32(image.loopCount)
        guard let encoder = WebPAnimEncoderNew(Int32(image.width), Int32(image.height), &encoderOptions) else {
            throw WebImageError.encodingFailed("WebP: cannot create the animation encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw WebImageError.encodingFailed("WebP config") }
        config.lossless = options.lossless ? 1 : 0
        config.quality = Float(min(1, max(0, options.quality)) * 100)
        var timestamp: Int32 = 0
        for frame in image.frames {
            try options.stop.check()
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
