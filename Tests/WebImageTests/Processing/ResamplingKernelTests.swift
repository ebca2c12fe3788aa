import Testing
import WebImageDemo
@testable import WebImage

/// The resampler's inner passes (C, built for the baseline and for AVX2): both builds give the
/// same bytes, and those bytes are the resize computed plainly in double precision.
@Suite struct ResamplingKernelTests {
    /// Sizes that reach every loop's tail: widths under and over the eight-pixel step, odd tap
    /// counts, one-pixel sides, enlargements.
    static let geometries = [(1, 1), (1, 9), (7, 5), (8, 8), (9, 3), (15, 17), (16, 16), (33, 20), (64, 47), (120, 90), (250, 301)]

    /// Noise, opaque or with alphas from `alphas`.
    static func noise(width: Int, height: Int, seed: UInt64, alphas: ClosedRange<UInt8>?) throws -> Bitmap {
        // A fixed sequence, so a failure repeats.
        var random = SampleImages.SeededBytes(seed: seed)
        func next() -> UInt8 { UInt8(truncatingIfNeeded: random.next()) }
        return try TestImages.bitmap(width: width, height: height) { _, _ in
            let alpha = alphas.map { UInt8(Int($0.lowerBound) + Int(next()) % ($0.count)) } ?? 255
            return (next(), next(), next(), alpha)
        }
    }

    static let images: [(name: String, alphas: ClosedRange<UInt8>?)] = [("opaque", nil), ("translucent", 32...255), ("any alpha", 0...255)]

    @Test(.enabled(if: Resampler.Kernels.avx2 != nil, "this CPU has no AVX2: only the baseline build runs here"),
          arguments: ResamplingFilter.allCases)
    func baselineAndAVX2GiveTheSameBytes(_ filter: ResamplingFilter) throws {
        let avx2 = try #require(Resampler.Kernels.avx2)
        for (index, image) in Self.images.enumerated() {
            let source = try Self.noise(width: 97, height: 61, seed: UInt64(index), alphas: image.alphas)
            for (width, height) in Self.geometries {
                let baseline = try Resampler.resize(source, width: width, height: height, filter: filter, twoThreadsFrom: .max,
                                                    kernels: .baseline)
                let wide = try Resampler.resize(source, width: width, height: height, filter: filter, twoThreadsFrom: .max,
                                                kernels: avx2)
                let same = baseline.withUnsafeBytes { a in wide.withUnsafeBytes { b in a.elementsEqual(b) } }
                #expect(same, "\(image.name), \(filter), \(width)×\(height)")
            }
        }
    }

    /// Every channel within one unit of the resize done in doubles, channel by channel, with the
    /// same weights: premultiplied, summed across, summed down, unpremultiplied, rounded. An
    /// opaque image comes out opaque.
    @Test(arguments: [Resampler.Kernels.baseline] + (Resampler.Kernels.avx2.map { [$0] } ?? []))
    func pixelsAreThoseOfAPlainResize(_ kernels: Resampler.Kernels) throws {
        for (index, image) in Self.images.prefix(2).enumerated() {
            let source = try Self.noise(width: 97, height: 61, seed: UInt64(10 + index), alphas: image.alphas)
            for filter in ResamplingFilter.allCases {
                for (width, height) in Self.geometries {
                    let resized = try Resampler.resize(source, width: width, height: height, filter: filter, twoThreadsFrom: .max,
                                                       kernels: kernels)
                    let expected = Self.plainResize(source, width: width, height: height, filter: filter)
                    let worst = resized.withUnsafeBytes { bytes in
                        zip(bytes, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
                    }
                    #expect(worst <= 1, "\(image.name), \(filter), \(width)×\(height): off by \(worst)")
                    if image.alphas == nil {
                        let opaque = resized.withUnsafeBytes { bytes in stride(from: 3, to: bytes.count, by: 4).allSatisfy { bytes[$0] == 255 } }
                        #expect(opaque, "\(filter), \(width)×\(height)")
                    }
                }
            }
        }
    }

    /// The resize the kernels must match, in doubles.
    static func plainResize(_ source: Bitmap, width: Int, height: Int, filter: ResamplingFilter) -> [UInt8] {
        let across = Contributions(source: source.width, target: width, filter: filter)
        let down = Contributions(source: source.height, target: height, filter: filter)
        let pixels = source.withUnsafeBytes { Array($0) }
        func premultiplied(_ x: Int, _ y: Int) -> [Double] {
            let o = y * source.bytesPerRow + x * 4
            let alpha = Double(pixels[o + 3]) / 255
            return [Double(pixels[o]) * alpha, Double(pixels[o + 1]) * alpha, Double(pixels[o + 2]) * alpha, Double(pixels[o + 3])]
        }
        var rows = [[Double]](repeating: [Double](repeating: 0, count: width * 4), count: source.height)
        for y in 0..<source.height {
            for x in 0..<width {
                for tap in 0..<across.counts[x] {
                    let value = premultiplied(across.starts[x] + tap, y)
                    let weight = Double(across.weights[x * across.stride + tap])
                    for channel in 0..<4 { rows[y][x * 4 + channel] += value[channel] * weight }
                }
            }
        }
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                var sum = [0.0, 0, 0, 0]
                for tap in 0..<down.counts[y] {
                    let weight = Double(down.weights[y * down.stride + tap])
                    for channel in 0..<4 { sum[channel] += rows[down.starts[y] + tap][x * 4 + channel] * weight }
                }
                let alpha = min(max(sum[3], 0), 255)
                guard alpha >= 0.5 else { continue }
                for channel in 0..<4 {
                    let value = channel == 3 ? alpha : sum[channel] * 255 / alpha
                    out[(y * width + x) * 4 + channel] = UInt8(min(max(value.rounded(), 0), 255))
                }
            }
        }
        return out
    }
}
