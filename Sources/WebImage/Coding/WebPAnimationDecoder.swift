import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Animated WebP through libwebp's `WebPAnimDecoder`, which composites each frame on the canvas.
///
/// The frame and byte limits are asked before each frame is decoded (``AnimationBudget``), and
/// thumbnails shrink each frame as it comes. Unlike GIF and PNG, the canvas is not checked against
/// the file's size: lossless WebP codes a solid area in next to no bits, so no ratio holds for
/// every valid file; the pixel limit and the frame budget bound it instead.
enum WebPAnimationDecoder {
    static func decode(_ base: UnsafePointer<UInt8>, count: Int, options: DecodeOptions) throws -> DecodedImage {
        var decoderOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else { throw WebImageError.corruptData("WebP: version mismatch") }
        decoderOptions.color_mode = MODE_RGBA
        decoderOptions.use_threads = 0
        var webPData = WebPData(bytes: base, size: count)
        // The canvas size is known from the VP8X header before the decoder allocates its canvas.
        var features = WebPBitstreamFeatures()
        guard WebPGetFeatures(base, count, &features) == VP8_STATUS_OK else { throw WebImageError.corruptData("WebP header") }
        try options.checkFullSizeCanvas(width: Int(features.width), height: Int(features.height))
        guard let decoder = WebPAnimDecoderNew(&webPData, &decoderOptions) else {
            throw WebImageError.corruptData("WebP: cannot read the animation")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw WebImageError.corruptData("WebP: animation info") }
        let width = Int(info.canvas_width), height = Int(info.canvas_height)
        let target = try options.targetSize(width: width, height: height)
        var frames: [ImageFrame] = []
        var previousTimestamp: Int32 = 0
        var budget = AnimationBudget(options: options, canvasWidth: width, canvasHeight: height, kept: target)
        while WebPAnimDecoderHasMoreFrames(decoder) != 0, budget.admitFrame() {
            var buffer: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
                if frames.isEmpty { throw WebImageError.corruptData("WebP: frame cannot be decoded") }
                throw WebImageError.truncatedData("WebP: animation ends early")
            }
            var bitmap = try Bitmap(width: width, height: height) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: buffer, count: width * height * 4))
            }
            if (target.width, target.height) != (width, height) {
                bitmap = try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
            }
            frames.append(ImageFrame(bitmap: bitmap, duration: Double(timestamp - previousTimestamp) / 1000))
            previousTimestamp = timestamp
        }
        var image = try DecodedImage(frames: frames, loopCount: Int(info.loop_count), format: .webp, scale: options.scale,
                                     hasAlpha: features.has_alpha != 0)
        image.truncation = budget.truncation
        return image
    }
}
