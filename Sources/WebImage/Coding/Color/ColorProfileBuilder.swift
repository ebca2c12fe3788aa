import CLCMS2
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes ICC profiles from a colour space's description, for files that describe their colours
/// without a profile: PNG `cHRM`/`gAMA`, and the nclx values (primaries, transfer) of AVIF, HEIF
/// and JPEG XL. HDR transfers (PQ, HLG) become curves that tone-map them for an SDR display
/// (see ``toneMapped(_:)``); the profiles are matrix/TRC, so they convert on the fast path. The result feeds ``ColorConversion/convertToSRGB(_:iccProfile:parallel:)``.
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

        /// SMPTE ST 2084 (PQ, nclx transfer 16), tone-mapped for an sRGB display: see
        /// ``ColorProfileBuilder/toneMapped(_:)``.
        case pq
        /// ARIB STD-B67 (HLG, nclx transfer 18): its inverse OETF and a 1000 cd/m² display's OOTF
        /// (gamma 1.2, per channel), then tone-mapped like ``pq``.
        case hlg

        /// The transfer of an nclx `transfer_characteristics` code, or `nil` for codes not handled
        /// here (they are shown as sRGB).
        package init?(nclx code: Int) {
            switch code {
            case 1, 6, 13, 14, 15: self = .sRGB
            case 4: self = .gamma(2.2)
            case 5: self = .gamma(2.8)
            case 8: self = .gamma(1)
            case 16: self = .pq
            case 18: self = .hlg
            default: return nil
            }
        }

        /// Encoded value (0...1) to display-relative linear light (0...1, sRGB white at 1), for
        /// the transfers that have no closed form in an ICC profile.
        func linear(_ encoded: Double) -> Double {
            switch self {
            case .sRGB: return encoded <= 0.04045 ? encoded / 12.92 : pow((encoded + 0.055) / 1.055, 2.4)
            case .gamma(let exponent): return pow(encoded, exponent)
            case .pq:
                let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
                let power = pow(max(0, encoded), 1 / m2)
                let nits = 10000 * pow(max(0, power - c1) / (c2 - c3 * power), 1 / m1)
                return ColorProfileBuilder.toneMapped(nits / ColorProfileBuilder.referenceWhite)
            case .hlg:
                let a = 0.17883277, b = 1 - 4 * 0.17883277, c = 0.5 - a * log(4 * a)
                let scene = encoded <= 0.5 ? encoded * encoded / 3 : (exp((encoded - c) / a) + b) / 12
                return ColorProfileBuilder.toneMapped(1000 * pow(max(0, scene), 1.2) / ColorProfileBuilder.referenceWhite)
            }
        }
    }

    /// HDR reference white in cd/m² (ITU-R BT.2408): the level shown as sRGB's white.
    static let referenceWhite = 203.0

    /// HDR light relative to reference white, fitted into SDR's 0...1: unchanged up to 0.75, then
    /// rolled off smoothly (an exponential shoulder with the same slope at the knee) towards 1,
    /// so highlights keep some gradation instead of clipping flat. A deliberately simple curve;
    /// browsers on SDR screens tone-map in similar spirit, each with its own curve.
    static func toneMapped(_ relative: Double) -> Double {
        let knee = 0.75
        guard relative > knee else { return max(0, relative) }
        return knee + (1 - knee) * (1 - exp(-(relative - knee) / (1 - knee)))
    }

    /// The profile for nclx `colour_primaries` and `transfer_characteristics` codes (ITU-T
    /// H.273, as in AVIF and HEIF `colr` boxes), or `nil` when the pixels need no conversion:
    /// sRGB itself, unspecified (2) values, which are shown as sRGB, or codes not handled here.
    public static func nclxProfile(primaries: Int, transfer: Int) -> Data? {
        let primaries = primaries == 2 ? Primaries.sRGB : Primaries(nclx: primaries)
        let transfer = transfer == 2 ? Transfer.sRGB : Transfer(nclx: transfer)
        guard let primaries, let transfer, (primaries, transfer) != (.sRGB, .sRGB) else { return nil }
        return rgbProfile(primaries: primaries, transfer: transfer)
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
        case .pq, .hlg:
            // Sampled finely enough that interpolating between entries is far below an 8-bit step.
            var table = (0..<4096).map { Float(transfer.linear(Double($0) / 4095)) }
            curve = cmsBuildTabulatedToneCurveFloat(nil, cmsUInt32Number(table.count), &table)
        }
        guard let curve else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfileTHR(nil, &white, &colorants, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0, bytes.count >= 36 else { return nil }
        // lcms2 stamps the header with the time the profile was made (bytes 24..<36), so two builds
        // of one colour space a second apart differed: equal images compared unequal and the
        // transform cache, keyed by the bytes, missed. A fixed date makes the bytes a function of
        // the colour space alone (no profile ID is computed, so none goes stale).
        bytes.replaceSubrange(24..<36, with: Self.fixedCreationDate)
        return Data(bytes.prefix(Int(size)))
    }

    /// 2000-01-01 00:00:00 as an ICC dateTimeNumber (six big-endian 16-bit fields).
    static let fixedCreationDate: [UInt8] = [0x07, 0xD0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0]
}
