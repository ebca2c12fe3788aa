import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for a WebP: the canvas or frame size (``FormatDetection/declaredSize(of:)``),
/// libwebp's header features (`WebPGetFeatures`: the VP8X alpha flag, VP8L's alpha hint, the
/// animation flag), the frame count of an animation from libwebp's demuxer (which reads chunk
/// headers only), the `EXIF` chunk's orientation and the `ICCP` profile (``WebPICCProfile``).
enum WebPInfoReader {
    static func read(_ data: Data) throws -> ImageInfo {
        try data.withUnsafeBytes { bytes throws -> ImageInfo in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            var features = WebPBitstreamFeatures()
            let status = WebPGetFeatures(base, bytes.count, &features)
            guard status == VP8_STATUS_OK else { throw WebPCoder.error(status) }
            guard let size = FormatDetection.declaredSize(of: data) else {
                throw WebImageError.corruptData("WebP: the header declares an empty side")
            }
            let frames = features.has_animation != 0 ? try frameCount(base, count: bytes.count) : 1
            let profile = WebPICCProfile.read(base, count: bytes.count)
            return ImageInfo(format: .webp, width: size.width, height: size.height, frames: frames,
                             orientation: WebPCoder.orientation(base, count: bytes.count), hasAlpha: features.has_alpha != 0,
                             bytes: bytes.count, colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
        }
    }

    /// The frames (`ANMF` chunks) the demuxer finds; of a file cut short, those that are whole.
    private static func frameCount(_ base: UnsafePointer<UInt8>, count: Int) throws -> Int {
        var webPData = WebPData(bytes: base, size: count)
        var state = WEBP_DEMUX_PARSING_HEADER
        guard let demuxer = WebPDemuxPartial(&webPData, &state), state != WEBP_DEMUX_PARSE_ERROR else {
            throw WebImageError.corruptData("WebP: the animation's chunks cannot be read")
        }
        defer { WebPDemuxDelete(demuxer) }
        let frames = Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
        guard frames > 0 else {
            throw state == WEBP_DEMUX_DONE ? WebImageError.corruptData("WebP: an animation without frames")
                : WebImageError.truncatedData("WebP: the data ends before the first frame")
        }
        return frames
    }
}
