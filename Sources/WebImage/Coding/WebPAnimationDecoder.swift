import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Animated WebP through libwebp's `WebPAnimDecoder`, which composites each frame on the canvas.
///
/// The frame and byte limits are asked before each frame is decoded (``AnimationBudget``), and
/// thumbnails shrink each frame as it comes. Before the decoder allocates its canvas (two of them,
/// cleared for every key frame), the canvas is checked against what the frames can paint
/// (``paintablePixels(_:count:atLeast:)``), so a tiny file cannot declare a huge canvas and cost
/// hundreds of MB of background. A lossless frame can code a solid area in next to no bits, so
/// no ratio of bytes holds for those: each counts its declared area, and the pixel limit and the
/// frame budget bound it, as for a still image.
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
        let canvasPixels = Int(features.width) * Int(features.height)
        try CompressionBound.check(width: Int(features.width), height: Int(features.height),
                                   paintablePixels: paintablePixels(base, count: count, atLeast: canvasPixels),
                                   format: "WebP animation")
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
        while WebPAnimDecoderHasMoreFrames(decoder) != 0, try budget.admitFrame() {
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

    /// The most canvas pixels the frames can paint, summed over the frames (counting stops once
    /// it reaches `atLeast`): a lossless (VP8L) frame its declared area, a lossy (VP8) one no more
    /// than its bitstream can code (``CompressionBound/vp8PixelsPerByte``). `Int.max` when the
    /// file's frames cannot be listed: the decoder then refuses the file itself.
    static func paintablePixels(_ base: UnsafePointer<UInt8>, count: Int, atLeast: Int) -> Int {
        var webPData = WebPData(bytes: base, size: count)
        guard let demuxer = WebPDemux(&webPData) else { return .max }
        defer { WebPDemuxDelete(demuxer) }
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demuxer, 1, &iterator) != 0 else { return .max }
        defer { WebPDemuxReleaseIterator(&iterator) }
        var paintable = 0
        repeat {
            let area = Int(iterator.width) * Int(iterator.height)
            let fragment = UnsafeBufferPointer(start: iterator.fragment.bytes, count: iterator.fragment.size)
            let isLossless = fragment.count >= 4 && fragment.prefix(4).elementsEqual("VP8L".utf8)
            let (coded, overflow) = fragment.count.multipliedReportingOverflow(by: CompressionBound.vp8PixelsPerByte)
            let frame = isLossless || overflow ? area : min(area, coded)
            paintable = paintable.addingReportingOverflow(frame).overflow ? .max : paintable + frame
            if paintable >= atLeast { break }
        } while WebPDemuxNextFrame(&iterator) != 0
        return paintable
    }
}
