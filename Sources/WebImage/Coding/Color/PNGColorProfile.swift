import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The colour space a PNG declares, read the way browsers (Chrome's Skia, Firefox) and PNG's
/// third edition read it: an `iCCP` profile; else an `sRGB` chunk means sRGB; else `cHRM` primaries and/or a `gAMA` exponent make a profile
/// (sRGB's primaries when only `gAMA` is there, sRGB's curve when only `cHRM` is).
enum PNGColorProfile {
    /// The profile declared by the PNG in `data`, read from its chunks before the image data
    /// (where the colour chunks must be) without decoding pixels: for APNG, whose frames are
    /// decoded apart from these chunks.
    static func profile(of data: Data) -> Data? {
        withHeaderContext(data) { profile(in: $0) }
    }

    /// The ICC profile the PNG in `data` embeds (its `iCCP` chunk, inflated), or `nil`: no
    /// profile made from `gAMA`/`cHRM`. Read from the chunks before the image data only.
    static func embeddedProfile(of data: Data) -> Data? {
        withHeaderContext(data) { context in
            var iccp = spng_iccp()
            guard spng_get_iccp(context, &iccp) == 0, let bytes = iccp.profile, iccp.profile_len > 0 else { return nil }
            return Data(bytes: bytes, count: iccp.profile_len)
        }
    }

    /// Runs `body` with a libspng context that has read `data`'s header (bad ancillary CRCs
    /// ignored, chunk sizes limited); `nil` when the header cannot be read.
    private static func withHeaderContext(_ data: Data, _ body: (OpaquePointer) -> Data?) -> Data? {
        data.withUnsafeBytes { bytes -> Data? in
            guard let base = bytes.baseAddress, let context = spng_ctx_new(0) else { return nil }
            defer { spng_ctx_free(context) }
            spng_set_crc_action(context, Int32(SPNG_CRC_ERROR.rawValue), Int32(SPNG_CRC_DISCARD.rawValue))
            spng_set_chunk_limits(context, 16 << 20, 64 << 20)
            var header = spng_ihdr()
            guard spng_set_png_buffer(context, base, bytes.count) == 0, spng_get_ihdr(context, &header) == 0 else { return nil }
            return body(context)
        }
    }

    /// The ICC profile for the decoded stream in `context` (after `spng_decode_image`, so that
    /// chunks after the image data are read too), or `nil` for sRGB or no colour information.
    static func profile(in context: OpaquePointer) -> Data? {
        var iccp = spng_iccp()
        if spng_get_iccp(context, &iccp) == 0, let bytes = iccp.profile, iccp.profile_len > 0 {
            return Data(bytes: bytes, count: iccp.profile_len)
        }
        var intent: UInt8 = 0
        if spng_get_srgb(context, &intent) == 0 { return nil }
        var gamma = 0.0
        let hasGamma = spng_get_gama(context, &gamma) == 0 && gamma > 0
        var chrm = spng_chrm()
        let hasPrimaries = spng_get_chrm(context, &chrm) == 0
        guard hasGamma || hasPrimaries else { return nil }
        let primaries = hasPrimaries
            ? ColorProfileBuilder.Primaries(white: .init(x: chrm.white_point_x, y: chrm.white_point_y),
                                            red: .init(x: chrm.red_x, y: chrm.red_y),
                                            green: .init(x: chrm.green_x, y: chrm.green_y),
                                            blue: .init(x: chrm.blue_x, y: chrm.blue_y))
            : .sRGB
        let transfer: ColorProfileBuilder.Transfer = hasGamma ? .gamma(1 / gamma) : .sRGB
        return ColorProfileBuilder.rgbProfile(primaries: primaries, transfer: transfer)
    }
}
