import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for a JPEG XL, from libjxl subscribed to its basic-info, colour-encoding and
/// frame-header events only (no pixel event, so libjxl skips each frame's data): the size,
/// alpha and orientation of the basic info, the frames an animation shows, and the original
/// colour encoding's ICC profile when the file embeds one (a structured encoding is no profile).
enum JXLInfoReader {
    /// The most frame headers read: each costs libjxl a frame's table of contents.
    static let maximumFrames = 1 << 16

    static func read(_ data: Data) throws -> ImageInfo {
        let (decoder, runner) = try JXLCoder.makeDecoder(events: [JXL_DEC_BASIC_INFO, JXL_DEC_COLOR_ENCODING, JXL_DEC_FRAME],
                                                         parallel: false)
        defer { JXLCoder.destroy(decoder, runner: runner) }
        return try data.withUnsafeBytes { bytes throws -> ImageInfo in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            try JXLCoder.setInput(decoder, base, count: bytes.count)
            var info: JxlBasicInfo?
            var profile: Data?
            var frames = 0, steps = 0
            // Each step is one event (basic info, colour, one frame header): bounded by the frame limit.
            reading: while frames < maximumFrames, steps < maximumFrames + 8 {
                steps += 1
                let status = JxlDecoderProcessInput(decoder)
                switch status {
                case JXL_DEC_BASIC_INFO:
                    var basic = JxlBasicInfo()
                    guard JxlDecoderGetBasicInfo(decoder, &basic) == JXL_DEC_SUCCESS else {
                        throw WebImageError.corruptData("JPEG XL: basic info")
                    }
                    info = basic
                case JXL_DEC_COLOR_ENCODING:
                    profile = embeddedProfile(decoder)
                    // A still image shows one frame: nothing after its colour encoding is needed.
                    if info?.have_animation == 0 { frames = 1; break reading }
                case JXL_DEC_FRAME:
                    frames += 1
                case JXL_DEC_SUCCESS:
                    break reading
                default:
                    // An animation cut short still has the frames whose headers were read.
                    if status == JXL_DEC_NEED_MORE_INPUT, info != nil, frames > 0 { break reading }
                    // A header alone (no frame yet) still tells the size.
                    if status == JXL_DEC_NEED_MORE_INPUT, info != nil { frames = 1; break reading }
                    throw JXLCoder.error(status, framesSoFar: frames)
                }
            }
            guard let info else { throw WebImageError.truncatedData("JPEG XL: the data ends before the basic info") }
            return ImageInfo(format: .jxl, width: Int(info.xsize), height: Int(info.ysize), frames: max(1, frames),
                             orientation: ImageOrientation(exifValue: Int(info.orientation.rawValue)),
                             hasAlpha: info.alpha_bits > 0, bytes: bytes.count,
                             colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
        }
    }

    /// The ICC profile of the original colour encoding when the file embeds one: libjxl gives
    /// a structured encoding as such (then there is no embedded profile) and only otherwise the ICC.
    private static func embeddedProfile(_ decoder: OpaquePointer) -> Data? {
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS {
            return nil
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &size) == JXL_DEC_SUCCESS,
              size > 0, size <= ICCTransformCache.maximumProfileSize else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &bytes, size) == JXL_DEC_SUCCESS else {
            return nil
        }
        return Data(bytes)
    }
}
