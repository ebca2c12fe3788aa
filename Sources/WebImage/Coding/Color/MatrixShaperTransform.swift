import CLCMS2

/// The conversion of an RGB matrix/TRC profile (Display P3, Adobe RGB, the profiles made from
/// nclx, `cHRM` and `gAMA`) to sRGB, computed here instead of through `cmsDoTransform`.
///
/// It is lcms2's own 8-bit matrix-shaper arithmetic (`OptimizeMatrixShaper` in `cmsopt.c`, the
/// pipeline lcms2 picks for exactly these profiles): the input curve per channel as a 1.14
/// fixed-point table of 256 entries, the 3×3 matrix in 1.14 fixed point, then a 16385-entry
/// table from linear light to the sRGB byte. The same tables and integer sums give lcms2's (and
/// Pillow's ImageCms's) bytes, but without lcms2's per-pixel formatter calls, which made it
/// run at ~40 megapixels a second: here each pixel is three table loads per input, one vector
/// add, one clamp and three output loads.
///
/// Only profiles lcms2 itself would run this way qualify (RGB, XYZ connection space, matrix and
/// curves, no `A2B`/`D2B` lookup tables, which lcms2 prefers when present), and only when the
/// fixed-point sums cannot overflow 32 bits; anything else stays on lcms2.
struct MatrixShaperTransform: Sendable {
    /// Per input channel, 256 entries: the linearised value times the matrix column, as the
    /// three output channels' 1.14 contributions (red's also carries the rounding term).
    private let red: [SIMD4<Int32>]
    private let green: [SIMD4<Int32>]
    private let blue: [SIMD4<Int32>]
    /// Linear light in 1.14 (0...16384) to the sRGB-encoded byte.
    private let output: [UInt8]

    static let one: Int32 = 1 << 14

    /// The transform from `profile` to sRGB, or `nil` when the profile is not one that lcms2
    /// converts as a plain matrix/TRC pair.
    init?(profile: cmsHPROFILE) {
        guard cmsGetColorSpace(profile) == cmsSigRgbData, cmsGetPCS(profile) == cmsSigXYZData,
              cmsIsMatrixShaper(profile) != 0 else { return nil }
        let lookupTables: [cmsTagSignature] = [cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag,
                                               cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigDToB2Tag, cmsSigDToB3Tag]
        guard !lookupTables.contains(where: { cmsIsTag(profile, $0) != 0 }) else { return nil }
        guard let source = Self.matrix(profile), let sRGBProfile = cmsCreate_sRGBProfile() else { return nil }
        defer { cmsCloseProfile(sRGBProfile) }
        guard let sRGB = Self.matrix(sRGBProfile), let toSRGB = Self.inverse(sRGB),
              let sRGBCurve = cmsReadTag(sRGBProfile, cmsSigRedTRCTag),
              let inverseCurve = cmsReverseToneCurve(OpaquePointer(sRGBCurve)) else { return nil }
        defer { cmsFreeToneCurve(inverseCurve) }
        // lcms2 multiplies the output matrix by the input one (`_cmsMAT3per`), then rounds to 1.14.
        var fixed = [[Int32]](repeating: [0, 0, 0], count: 3)
        for row in 0..<3 {
            for column in 0..<3 {
                let value = (0..<3).reduce(0.0) { $0 + toSRGB[row][$1] * source[$1][column] }
                guard value.isFinite, abs(value) < 64 else { return nil }
                fixed[row][column] = Int32((value * 16384 + 0.5).rounded(.down)) // DOUBLE_TO_1FIXED14
            }
        }
        var shapers: [[Int32]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(profile, tag) else { return nil }
            var table = [Int32](repeating: 0, count: 256)
            for index in 0..<256 {
                let y = Double(cmsEvalToneCurveFloat(OpaquePointer(curve), Float(Double(index) / 255.0)))
                // lcms2 stores 0x7fffffff past 131072; such curves (and NaNs) stay on lcms2.
                guard y.isFinite, y > -4, y < 4 else { return nil }
                table[index] = Int32((y * 16384 + 0.5).rounded(.down))
            }
            shapers.append(table)
        }
        // The sums must stay inside 32 bits, where lcms2's C arithmetic is defined.
        for row in 0..<3 {
            let worst = (0..<3).reduce(Int64(Self.one)) { sum, column in
                sum + Int64(abs(fixed[row][column])) * Int64(shapers[column].map { abs($0) }.max() ?? 0)
            }
            guard worst < Int64(Int32.max) / 2 else { return nil }
        }
        func contributions(_ column: Int, rounding: Int32) -> [SIMD4<Int32>] {
            shapers[column].map { value in
                SIMD4(fixed[0][column] &* value &+ rounding, fixed[1][column] &* value &+ rounding,
                      fixed[2][column] &* value &+ rounding, 0)
            }
        }
        red = contributions(0, rounding: 0x2000)
        green = contributions(1, rounding: 0)
        blue = contributions(2, rounding: 0)
        output = (0...Int(Self.one)).map { index in
            var value = Double(cmsEvalToneCurveFloat(inverseCurve, Float(Double(index) / 16384.0)))
            value = min(1, max(0, value.isNaN ? 0 : value))
            // lcms2's _cmsQuickSaturateWord, then FROM_16_TO_8.
            let word = UInt32(min(65535, max(0, (value * 65535 + 0.5).rounded(.down))))
            return UInt8((word &* 65281 &+ 8_388_608) >> 24)
        }
    }

    /// Converts `pixelCount` RGBA8 pixels from `source` to `target` (which may be the same
    /// memory), copying alpha.
    func run(_ source: UnsafeRawPointer, _ target: UnsafeMutableRawPointer, pixelCount: Int) {
        red.withUnsafeBufferPointer { red in
            green.withUnsafeBufferPointer { green in
                blue.withUnsafeBufferPointer { blue in
                    output.withUnsafeBufferPointer { output in
                        guard let red = red.baseAddress, let green = green.baseAddress, let blue = blue.baseAddress,
                              let output = output.baseAddress else { return }
                        Self.convert(source, target, pixelCount: pixelCount, red, green, blue, output)
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func convert(_ source: UnsafeRawPointer, _ target: UnsafeMutableRawPointer, pixelCount: Int,
                                _ red: UnsafePointer<SIMD4<Int32>>, _ green: UnsafePointer<SIMD4<Int32>>,
                                _ blue: UnsafePointer<SIMD4<Int32>>, _ output: UnsafePointer<UInt8>) {
        let low = SIMD4<Int32>(repeating: 0), high = SIMD4<Int32>(repeating: one)
        var offset = 0
        let end = pixelCount &* 4
        while offset < end {
            let pixel = source.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            var sum = red[Int(pixel & 0xFF)] &+ green[Int((pixel >> 8) & 0xFF)] &+ blue[Int((pixel >> 16) & 0xFF)]
            sum = (sum &>> 14).clamped(lowerBound: low, upperBound: high)
            let r = UInt32(output[Int(sum[0])]), g = UInt32(output[Int(sum[1])]), b = UInt32(output[Int(sum[2])])
            target.storeBytes(of: r | g << 8 | b << 16 | (pixel & 0xFF00_0000), toByteOffset: offset, as: UInt32.self)
            offset &+= 4
        }
    }

    /// The profile's colorants as a matrix (rows X, Y, Z; columns red, green, blue).
    private static func matrix(_ profile: cmsHPROFILE) -> [[Double]]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let xyz = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee else { return nil }
            columns.append(xyz)
        }
        return [columns.map(\.X), columns.map(\.Y), columns.map(\.Z)]
    }

    private static func inverse(_ m: [[Double]]) -> [[Double]]? {
        let determinant = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        guard determinant.isFinite, abs(determinant) > 1e-9 else { return nil }
        func cofactor(_ r: Int, _ c: Int) -> Double {
            let rows = (0..<3).filter { $0 != r }, columns = (0..<3).filter { $0 != c }
            let minor = m[rows[0]][columns[0]] * m[rows[1]][columns[1]] - m[rows[0]][columns[1]] * m[rows[1]][columns[0]]
            return (r + c) % 2 == 0 ? minor : -minor
        }
        return (0..<3).map { row in (0..<3).map { column in cofactor(column, row) / determinant } }
    }
}
