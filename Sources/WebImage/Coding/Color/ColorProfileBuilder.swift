import CLCMS2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes ICC profiles from a colour space's description, for files that describe their colours
/// without a profile: PNG `cHRM`/`gAMA`, and the nclx values (primaries, transfer) of AVIF, HEIF
/// and JPEG XL. The result feeds ``ColorConversion/convertToSRGB(_:iccProfile:parallel:)``.
package enum ColorProfileBuilder {
    /// A chromaticity (CIE xy).
    package struct Chromaticity: Sendable, Hashable {
        package var x: Double
        package var y: Double
        /// Creates a chromaticity.
        package init(x: Double, y: Double) { self.x = x; self.y = y }
    }

    /// A colour space's white point and red, green and blue primaries.
    package struct Primaries: Sendable, Hashable {
        package var white: Chromaticity
        package var red: Chromaticity
        package var green: Chromaticity
        package var blue: Chromaticity
        /// Creates primaries.
        package init(white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity) {
            self.white = white; self.red = red; self.green = green; self.blue = blue
        }

        /// BT.709 / sRGB (nclx primaries 1).
        package static let sRGB = Primaries(white: .init(x: 0.3127, y: 0.3290), red: .init(x: 0.64, y: 0.33),
                                           green: .init(x: 0.30, y: 0.60), blue: .init(x: 0.15, y: 0.06))
        /// Display P3 (nclx primaries 12, SMPTE EG 432-1): DCI-P3 primaries, D65 white.
        package static let displayP3 = Primaries(white: .init(x: 0.3127, y: 0.3290), red: .init(x: 0.680, y: 0.320),
                                                green: .init(x: 0.265, y: 0.690), blue: .init(x: 0.150, y: 0.060))
        /// BT.2020 (nclx primaries 9).
        package static let bt2020 = Primaries(white: .init(x: 0.3127, y: 0.3290), red: .init(x: 0.708, y: 0.292),
                                             green: .init(x: 0.170, y: 0.797), blue: .init(x: 0.131, y: 0.046))
        /// Adobe RGB (1998).
        package static let adobeRGB = Primaries(white: .init(x: 0.3127, y: 0.3290), red: .init(x: 0.64, y: 0.33),
                                               green: .init(x: 0.21, y: 0.71), blue: .init(x: 0.15, y: 0.06))

        /// The primaries of an nclx `colour_primaries` code (ITU-T H.273), or `nil` for codes not
        /// handled here.
        package init?(nclx code: Int) {
            switch code {
            case 1: self = .sRGB
            case 9: self = .bt2020
            case 12: self = .displayP3
            default: return nil
            }
        }
    }

    /// How encoded values map to linear light.
    package enum Transfer: Sendable, Hashable {
        /// sRGB's piecewise curve (nclx transfer 13; also 1, 6 and 14/15 are displayed with it, as
        /// browsers do).
        case sRGB
        /// A pure power: linear = encoded ^ `exponent` (PNG `gAMA` gives 1 / gamma; nclx 4 is 2.2,
        /// 5 is 2.8, 8 is linear).
        case gamma(Double)

        /// The transfer of an nclx `transfer_characteristics` code, or `nil` for codes not handled
        /// here (PQ and HLG need tone mapping, not a profile).
        package init?(nclx code: Int) {
            switch code {
            case 1, 6, 13, 14, 15: self = .sRGB
            case 4: self = .gamma(2.2)
            case 5: self = .gamma(2.8)
            case 8: self = .gamma(1)
            default: return nil
            }
        }
    }

    /// The bytes of an RGB matrix/TRC ICC profile for `primaries` and `transfer`, or `nil` when
    /// lcms2 cannot make one (degenerate primaries).
    package static func rgbProfile(primaries: Primaries, transfer: Transfer) -> Data? {
        var white = cmsCIExyY(x: primaries.white.x, y: primaries.white.y, Y: 1)
        var colorants = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: primaries.red.x, y: primaries.red.y, Y: 1),
            Green: cmsCIExyY(x: primaries.green.x, y: primaries.green.y, Y: 1),
            Blue: cmsCIExyY(x: primaries.blue.x, y: primaries.blue.y, Y: 1))
        let curve: OpaquePointer?
        switch transfer {
        case .sRGB:
            // IEC 61966-2.1: lcms2's parametric type 4.
            var parameters: [cmsFloat64Number] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            curve = cmsBuildParametricToneCurve(nil, 4, &parameters)
        case .gamma(let exponent):
            guard exponent.isFinite, exponent > 0.05, exponent < 20 else { return nil }
            curve = cmsBuildGamma(nil, exponent)
        }
        guard let curve else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfileTHR(nil, &white, &colorants, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return Data(bytes.prefix(Int(size)))
    }
}
