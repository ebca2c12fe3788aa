/// libjpeg's reduced-size inverse DCTs (jidctred.c) and YCbCr→RGB conversion (jdcolor.c), in
/// libjpeg's own fixed-point arithmetic so ``JPEGEighthScaleDecoder`` gives its pixels exactly.
enum JPEGReducedIDCT {
    /// libjpeg's post-IDCT range limit: a clamp to 0...255 for the plausible range, wrapping for
    /// values a valid image cannot produce.
    @inline(__always)
    static func rangeLimit(_ value: Int) -> UInt8 {
        let wrapped = value & 1023
        if wrapped < 128 { return UInt8(wrapped + 128) }
        if wrapped < 512 { return 255 }
        if wrapped < 896 { return 0 }
        return UInt8(wrapped - 896)
    }

    /// The 1×1 output of a block: its dequantized DC coefficient over 8.
    @inline(__always)
    static func oneByOne(dequantizedDC: Int) -> UInt8 {
        rangeLimit((dequantizedDC + 4) >> 3)
    }

    /// Fixed-point odd part of the 2-point IDCT over coefficients 1, 3, 5 and 7.
    @inline(__always)
    private static func oddPart(_ c1: Int, _ c3: Int, _ c5: Int, _ c7: Int) -> Int {
        c7 * -5906 + c5 * 6967 + c3 * -10426 + c1 * 29692
    }

    /// The first (column) pass of jpeg_idct_2x2 over columns 0, 1, 3, 5 and 7, without the DC
    /// term, from its ten sums: per column the even part (row 0 times 2^15), then per column the
    /// odd part (rows 1, 3, 5 and 7 times their factors), each coefficient already dequantized.
    /// `workspace` gets the top row's five values, then the bottom row's.
    ///
    /// The DC term adds exactly `dequantized DC << 2` to both rows' column 0, so it can be added
    /// once the DC prediction is known (see ``twoByTwoSecondPass(_:dequantizedDC:into:rowStride:)``).
    /// The values are kept as shorts, which holds them for any ordinary photo (they grow with
    /// chroma AC coefficients times their quantizers); `false` when one does not fit, and the
    /// image is left to libjpeg-turbo.
    @inline(__always)
    static func twoByTwoFirstPass(sums: UnsafePointer<Int>, into workspace: UnsafeMutablePointer<Int16>) -> Bool {
        var fits = true
        for slot in 0..<5 {
            let even = sums[slot], odd = sums[5 + slot]
            let top = (even &+ odd &+ (1 << 12)) &>> 13, bottom = (even &- odd &+ (1 << 12)) &>> 13
            workspace[slot] = Int16(truncatingIfNeeded: top)
            workspace[5 + slot] = Int16(truncatingIfNeeded: bottom)
            fits = fits && Int(Int16(truncatingIfNeeded: top)) == top && Int(Int16(truncatingIfNeeded: bottom)) == bottom
        }
        return fits
    }

    /// The second (row) pass of jpeg_idct_2x2: adds the DC term to the first pass and writes the
    /// 2×2 samples.
    ///
    /// Returns whether every build of libjpeg-turbo gives these samples. Its C code computes in
    /// full-width integers and wraps out-of-range samples through its range-limit table; its SIMD
    /// code (SSE2, which Debian's x86-64 build runs) multiplies the DC in 16 bits, shifts column 0
    /// in 32 and saturates the samples. They agree, and agree with this, while the dequantized
    /// DC fits 16 bits, column 0 stays under 2^16 and every sample lies within -384...383 before
    /// the limit: any photo, but not every corrupt file. Where they differ the caller hands the
    /// image to libjpeg-turbo (found by JPEGEighthScaleFuzzer, which checks the pixels against it).
    static func twoByTwoSecondPass(_ workspace: UnsafePointer<Int16>, dequantizedDC: Int,
                                   into target: UnsafeMutablePointer<UInt8>, rowStride: Int) -> Bool {
        var agrees = dequantizedDC == Int(Int16(truncatingIfNeeded: dequantizedDC))
        let dcTerm = dequantizedDC << 2
        for row in 0..<2 {
            let values = workspace + 5 * row
            let columnZero = Int(values[0]) + dcTerm
            let even = columnZero << 15
            let odd = oddPart(Int(values[1]), Int(values[2]), Int(values[3]), Int(values[4]))
            let left = (even + odd + (1 << 19)) >> 20, right = (even - odd + (1 << 19)) >> 20
            target[row * rowStride] = rangeLimit(left)
            target[row * rowStride + 1] = rangeLimit(right)
            agrees = agrees && (-65536..<65536).contains(columnZero) && (-384...383).contains(left) && (-384...383).contains(right)
        }
        return agrees
    }

    /// libjpeg's YCbCr→RGB tables (16-bit fixed point): Cr→R, Cb→B, Cr→G, Cb→G, 256 entries each.
    private static let colorTables: [Int] = (0..<256).map { ((91881 * ($0 - 128)) + 32768) >> 16 }
        + (0..<256).map { ((116130 * ($0 - 128)) + 32768) >> 16 }
        + (0..<256).map { -46802 * ($0 - 128) }
        + (0..<256).map { -22554 * ($0 - 128) + 32768 }

    /// Pointers to the YCbCr→RGB tables.
    struct ColorTables {
        let base: UnsafePointer<Int>

        /// One RGBA pixel from YCbCr samples, as libjpeg converts it.
        @inline(__always)
        func rgba(luma: Int, cb: Int, cr: Int, into pixel: UnsafeMutablePointer<UInt8>) {
            pixel[0] = UInt8(clamping: luma + base[cr])
            pixel[1] = UInt8(clamping: luma + ((base[768 + cb] + base[512 + cr]) >> 16))
            pixel[2] = UInt8(clamping: luma + base[256 + cb])
            pixel[3] = 255
        }
    }

    static func withColorTables<Result>(_ body: (ColorTables) -> Result) -> Result {
        colorTables.withUnsafeBufferPointer { body(ColorTables(base: $0.baseAddress!)) }
    }
}
