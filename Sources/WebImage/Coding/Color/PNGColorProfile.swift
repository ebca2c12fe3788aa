import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The colour space a PNG declares, read the way browsers read it: an `sRGB` chunk means sRGB;
/// else an `iCCP` profile; else `cHRM` primaries and/or a `gAMA` exponent make a profile
/// (sRGB's primaries when only `gAMA` is there, sRGB's curve when only `cHRM` is).
enum PNGColorProfile {
    /// The ICC profile for the decoded stream in `context` (after `spng_decode_image`, so that
    /// chunks after the image data are read too), or `nil` for sRGB or no colour information.
    static func profile(in context: OpaquePointer) -> Data? {
        var intent: UInt8 = 0
        if spng_get_srgb(context, &intent) == 0 { return nil }
        var iccp = spng_iccp()
        if spng_get_iccp(context, &iccp) == 0, let bytes = iccp.profile, iccp.profile_len > 0 {
            return Data(bytes: bytes, count: iccp.profile_len)
        }
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
