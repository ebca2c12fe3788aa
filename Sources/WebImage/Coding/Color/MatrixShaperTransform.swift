import CLCMS2

/// The conversion of an RGB matrix/TRC profile (Display P3, Adobe RGB, the profiles made from
/// nclx, `cHRM` and `gAMA`) to sRGB, computed here instead of through `cmsDoTransform`.
///
/// It is lcms2's own 8-bit matrix-shaper arithmetic (`OptimizeMatrixShaper` in `cmsopt.c`, the
/// pipeline lcms2 picks for exactly these profiles): the input curve per channel in 1.14 fixed
/// point, the 3×3 matrix in 1.14, then a table from linear light (1.14, clamped to 0...1) to the
/// sRGB byte. lcms2 runs it at ~40 megapixels a second through per-pixel formatter calls.
///
/// Here each pixel costs three 64-bit table loads, two integer adds and three byte loads, with
/// no branch: each input channel's table entry holds that channel's contribution to all three
/// outputs, premultiplied by the matrix, as three 21-bit lanes of one `UInt64` (kept
/// non-negative by per-table offsets, so adding three entries never carries from one lane into
/// the next), with 5 bits below lcms2's 1.14 so the sum rounds like lcms2's full-precision one
/// (within one 1.14 step at worst, a fifth of a code value near black). The lanes, shifted, are
/// `UInt16` indices into a 65536-entry output table that folds in lcms2's clamp, so no index
/// can leave the table whatever the profile.
///
/// Only profiles lcms2 itself would run this way qualify (RGB, XYZ connection space, matrix and
/// curves, no `A2B`/`D2B` lookup tables, which lcms2 prefers when present), and only when every
/// output lane fits its 21 bits; anything else stays on lcms2.
struct MatrixShaperTransform: Sendable {
    /// Per input channel, 256 entries: the three outputs' lanes (see the type).
    private let red: [UInt64]
    private let green: [UInt64]
    private let blue: [UInt64]
    /// A lane's value shifted right by ``fractionBits`` (linear light in 1.14 plus an offset) to
    /// the sRGB-encoded byte; 65536 entries, so every `UInt16` index is inside it.
    private let output: [UInt8]

    static let one: Int64 = 1 << 14
    /// Bits kept below 1.14 in each lane, and the lanes' width and positions.
    static let fractionBits = 5
    static let laneBits = 21

    /// The transform from `profile` to sRGB, or `nil` when the profile is not one that lcms2
    /// converts as a plain matrix/TRC pair, or its sums do not fit the lanes.
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
        var fixed = [[Int64]](repeating: [0, 0, 0], count: 3)
        for row in 0..<3 {
            for column in 0..<3 {
                let value = (0..<3).reduce(0.0) { $0 + toSRGB[row][$1] * source[$1][column] }
                guard value.isFinite, abs(value) < 64 else { return nil }
                fixed[row][column] = Int64((value * 16384 + 0.5).rounded(.down)) // DOUBLE_TO_1FIXED14
            }
        }
        var shapers: [[Int64]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(profile, tag) else { return nil }
            var table = [Int64](repeating: 0, count: 256)
            for index in 0..<256 {
                let y = Double(cmsEvalToneCurveFloat(OpaquePointer(curve), Float(Double(index) / 255.0)))
                // lcms2 stores 0x7fffffff past 131072; such curves (and NaNs) stay on lcms2.
                guard y.isFinite, y > -4, y < 4 else { return nil }
                table[index] = Int64((y * 16384 + 0.5).rounded(.down))
            }
            shapers.append(table)
        }
        // terms[input][output][value]: the product in 1.14 + fractionBits, rounded down (lcms2
        // keeps all 28 bits; the 5 kept here decide its rounding all but rarely).
        let drop = Int64(14 - Self.fractionBits)
        let terms = (0..<3).map { input in
            (0..<3).map { output in shapers[input].map { (fixed[output][input] * $0) >> drop } }
        }
        // Each table's lane is its term minus the term's least value; the least values, lcms2's
        // rounding half (0x2000) and an offset that makes the smallest index 0 go into red's.
        let half = Int64(1) << (Self.fractionBits - 1)
        let floors = (0..<3).map { output in (0..<3).reduce(half) { $0 + (terms[$1][output].min() ?? 0) } }
        let spans = (0..<3).map { output in (0..<3).reduce(Int64(0)) { $0 + (terms[$1][output].max() ?? 0) - (terms[$1][output].min() ?? 0) } }
        let offset = -(floors.map { $0 >> Int64(Self.fractionBits) }.min() ?? 0) // in 1.14 steps
        let constants = floors.map { $0 + (offset << Int64(Self.fractionBits)) }
        let laneLimit = Int64(1) << Int64(Self.laneBits)
        for output in 0..<3 {
            guard constants[output] >= 0, constants[output] + spans[output] < laneLimit else { return nil }
        }
        func lanes(_ input: Int, constant: (Int) -> Int64) -> [UInt64] {
            (0..<256).map { value in
                (0..<3).reduce(UInt64(0)) { packed, output in
                    let lane = terms[input][output][value] - (terms[input][output].min() ?? 0) + constant(output)
                    return packed | UInt64(lane) << UInt64(output * Self.laneBits)
                }
            }
        }
        red = lanes(0) { constants[$0] }
        green = lanes(1) { _ in 0 }
        blue = lanes(2) { _ in 0 }
        let encoded = (0...Self.one).map { linear in
            var value = Double(cmsEvalToneCurveFloat(inverseCurve, Float(Double(linear) / 16384.0)))
            value = min(1, max(0, value.isNaN ? 0 : value))
            // lcms2's _cmsQuickSaturateWord, then FROM_16_TO_8.
            let word = UInt32(min(65535, max(0, (value * 65535 + 0.5).rounded(.down))))
            return UInt8((word &* 65281 &+ 8_388_608) >> 24)
        }
        // lcms2 clamps the matrix's output to 0...0x4000 before its output curve.
        output = (0..<65536).map { index in encoded[Int(min(Self.one, max(0, Int64(index) - offset)))] }
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

    /// The loop: every index is a byte (input tables of 256) or a `UInt16` (the output table of
    /// 65536), so nothing needs checking per pixel.
    @inline(__always)
    private static func convert(_ source: UnsafeRawPointer, _ target: UnsafeMutableRawPointer, pixelCount: Int,
                                _ red: UnsafePointer<UInt64>, _ green: UnsafePointer<UInt64>,
                                _ blue: UnsafePointer<UInt64>, _ output: UnsafePointer<UInt8>) {
        let shifts = (UInt64(fractionBits), UInt64(laneBits + fractionBits), UInt64(2 * laneBits + fractionBits))
        var offset = 0
        let end = pixelCount &* 4
        while offset < end {
            let pixel = source.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            let sum = red[Int(pixel & 0xFF)] &+ green[Int((pixel &>> 8) & 0xFF)] &+ blue[Int((pixel &>> 16) & 0xFF)]
            let r = UInt32(output[Int(UInt16(truncatingIfNeeded: sum &>> shifts.0))])
            let g = UInt32(output[Int(UInt16(truncatingIfNeeded: sum &>> shifts.1))])
            let b = UInt32(output[Int(UInt16(truncatingIfNeeded: sum &>> shifts.2))])
            target.storeBytes(of: r | g &<< 8 | b &<< 16 | (pixel & 0xFF00_0000), toByteOffset: offset, as: UInt32.self)
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
