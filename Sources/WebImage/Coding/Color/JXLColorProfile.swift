import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The colour space of a JPEG XL image's decoded pixels, as a profile for ``ColorConversion``.
///
/// It asks for the colour of the *data* libjxl returns, not the original's: an XYB-coded image
/// with an attached ICC profile comes out of libjxl 0.7 (no CMS) in another space, which this
/// reports. A structured colour encoding becomes a profile made by ``ColorProfileBuilder`` (so
/// PQ and HLG are tone-mapped like AVIF's and HEIF's); an ICC profile is taken as it is.
enum JXLColorProfile {
    /// The profile, or `nil` for sRGB, grey or an encoding that cannot be read. Call it after
    /// libjxl reported `JXL_DEC_COLOR_ENCODING`.
    static func profile(_ decoder: OpaquePointer) -> Data? {
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS {
            guard encoding.color_space == JXL_COLOR_SPACE_RGB,
                  let primaries = primaries(encoding), let transfer = transfer(encoding),
                  (primaries, transfer) != (.sRGB, .sRGB) else { return nil }
            return ColorProfileBuilder.rgbProfile(primaries: primaries, transfer: transfer)
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
              size > 0, size <= ICCTransformCache.maximumProfileSize else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &bytes, size) == JXL_DEC_SUCCESS else {
            return nil
        }
        return Data(bytes)
    }

    private static func primaries(_ encoding: JxlColorEncoding) -> ColorProfileBuilder.Primaries? {
        typealias Chromaticity = ColorProfileBuilder.Chromaticity
        let white: Chromaticity
        switch encoding.white_point {
        case JXL_WHITE_POINT_D65: white = ColorProfileBuilder.Primaries.sRGB.white
        case JXL_WHITE_POINT_DCI: white = Chromaticity(x: 0.314, y: 0.351)
        case JXL_WHITE_POINT_E: white = Chromaticity(x: 1.0 / 3, y: 1.0 / 3)
        default: white = Chromaticity(x: encoding.white_point_xy.0, y: encoding.white_point_xy.1)
        }
        var primaries: ColorProfileBuilder.Primaries
        switch encoding.primaries {
        case JXL_PRIMARIES_SRGB: primaries = .sRGB
        case JXL_PRIMARIES_2100: primaries = .bt2020
        case JXL_PRIMARIES_P3: primaries = .displayP3
        default:
            primaries = .init(white: white, red: .init(x: encoding.primaries_red_xy.0, y: encoding.primaries_red_xy.1),
                              green: .init(x: encoding.primaries_green_xy.0, y: encoding.primaries_green_xy.1),
                              blue: .init(x: encoding.primaries_blue_xy.0, y: encoding.primaries_blue_xy.1))
        }
        primaries.white = white
        return primaries
    }

    private static func transfer(_ encoding: JxlColorEncoding) -> ColorProfileBuilder.Transfer? {
        switch encoding.transfer_function {
        case JXL_TRANSFER_FUNCTION_GAMMA:
            // libjxl's gamma is the encoding exponent (0.45 for a 2.2 curve).
            guard encoding.gamma > 0 else { return nil }
            return .gamma(1 / encoding.gamma)
        case JXL_TRANSFER_FUNCTION_DCI: return .gamma(2.6)
        default: return ColorProfileBuilder.Transfer(nclx: Int(encoding.transfer_function.rawValue))
        }
    }
}
