#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ImageTransformers {
    /// Blurs every frame with a Gaussian: below a standard deviation of 2, an exact (sampled,
    /// normalized) kernel in each direction; from 2 on, three box blurs in each direction, whose
    /// widths are chosen so their combined variance matches the Gaussian's (boxes have odd integer
    /// widths, so it is off by up to about 17 % near 2, less for larger radii).
    ///
    /// Blurring works on premultiplied values, so transparent pixels do not darken their neighbours;
    /// beyond the edges the edge pixels repeat, so the borders do not fade.
    public struct Blur: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The Gaussian's standard deviation in pixels (what Pillow's `GaussianBlur` and Core Image's
        /// `CIGaussianBlur` call radius). 0 or less, or not finite, the image is left unchanged;
        /// values above 1000 act as 1000.
        public var radius: Double

        /// Creates a blur with a standard deviation of `radius` pixels.
        public init(radius: Double) {
            self.radius = radius
        }

        /// `"blur(R)"`, e.g. `"blur(4)"` or `"blur(2.5)"`.
        public var identifier: String { "blur(\(TransformSupport.format(sigma)))" }

        private var sigma: Double { radius.isFinite && radius > 0 ? min(radius, 1000) : 0 }

        /// Blurs every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let sigma = self.sigma
            if sigma == 0 { return image }
            return try image.mappingFrames { try Self.blurred($0, sigma: sigma) }
        }

        /// Below this standard deviation the kernel is exact: boxes approximate it poorly there.
        static let exactBelow = 2.0

        /// `bitmap` blurred with a Gaussian of `sigma` (positive, finite): exact below
        /// ``exactBelow``, three box passes from it on. Shared with ``Sharpen``.
        static func blurred(_ bitmap: Bitmap, sigma: Double) throws -> Bitmap {
            guard sigma < exactBelow else { return try blur(bitmap, radii: boxRadii(sigma: sigma)) }
            let radius = max(1, Int((3 * sigma).rounded(.up)))
            var weights = (-radius...radius).map { offset in Float(exp(-Double(offset * offset) / (2 * sigma * sigma))) }
            let total = weights.reduce(0, +)
            weights = weights.map { $0 / total }
            return try convolve(bitmap, passes: [.kernel(weights, radius: radius)])
        }

        /// Half-widths of three boxes whose repeated application approximates a Gaussian of `sigma`
        /// (the classic "boxes for Gauss" choice: widths n and n + 2 mixed to match the variance).
        static func boxRadii(sigma: Double) -> [Int] {
            guard sigma > 0 else { return [0, 0, 0] }
            let passes = 3.0
            let ideal = (12 * sigma * sigma / passes + 1).squareRoot()
            var lower = Int(ideal.rounded(.down))
            if lower % 2 == 0 { lower -= 1 }
            lower = max(lower, 1)
            let upper = lower + 2
            let l = Double(lower)
            let mIdeal = (12 * sigma * sigma - passes * l * l - 4 * passes * l - 3 * passes) / (-4 * l - 4)
            let m = Int(mIdeal.rounded())
            return (0..<3).map { ($0 < m ? lower : upper) / 2 }
        }

        /// `bitmap` blurred by three box passes of `radii` (``boxRadii(sigma:)``).
        static func blur(_ bitmap: Bitmap, radii: [Int]) throws -> Bitmap {
            try convolve(bitmap, passes: radii.filter { $0 > 0 }.map { .box(radius: $0) })
        }

        /// One separable pass, run along every row and then every column.
        private enum Pass {
            /// A box of `2 × radius + 1`.
            case box(radius: Int)
            /// A kernel of `2 × radius + 1` normalized weights.
            case kernel([Float], radius: Int)
        }

        /// `bitmap` with each of `passes` run along every row, then every column, on premultiplied values.
        private static func convolve(_ bitmap: Bitmap, passes: [Pass]) throws -> Bitmap {
            let width = bitmap.width, height = bitmap.height
            let count = width * height * 4
            // Premultiplied channels scaled by 255 (alpha too), so integer sums keep full precision.
            var current = [Int32](repeating: 0, count: count)
            var scratch = [Int32](repeating: 0, count: count)
            bitmap.withUnsafeBytes { source in
                for index in stride(from: 0, to: count, by: 4) {
                    let alpha = Int32(source[index + 3])
                    current[index] = Int32(source[index]) * alpha
                    current[index + 1] = Int32(source[index + 1]) * alpha
                    current[index + 2] = Int32(source[index + 2]) * alpha
                    current[index + 3] = alpha * 255
                }
            }
            func run(_ pass: Pass, _ from: UnsafePointer<Int32>, _ to: UnsafeMutablePointer<Int32>, length: Int, step: Int) {
                switch pass {
                case .box(let radius): boxPass(from, to, length: length, step: step, radius: radius)
                case .kernel(let weights, let radius): kernelPass(from, to, length: length, step: step, weights: weights, radius: radius)
                }
            }
            for pass in passes {
                current.withUnsafeBufferPointer { from in
                    scratch.withUnsafeMutableBufferPointer { to in
                        for y in 0..<height {
                            run(pass, from.baseAddress! + y * width * 4, to.baseAddress! + y * width * 4, length: width, step: 4)
                        }
                    }
                }
                scratch.withUnsafeBufferPointer { from in
                    current.withUnsafeMutableBufferPointer { to in
                        for x in 0..<width {
                            run(pass, from.baseAddress! + x * 4, to.baseAddress! + x * 4, length: height, step: width * 4)
                        }
                    }
                }
            }
            return try Bitmap(width: width, height: height) { target in
                let pixels = target.bindMemory(to: UInt8.self)
                for index in stride(from: 0, to: count, by: 4) {
                    let alpha = current[index + 3]
                    let straightAlpha = (alpha + 127) / 255
                    guard straightAlpha > 0 else {
                        pixels[index] = 0; pixels[index + 1] = 0; pixels[index + 2] = 0; pixels[index + 3] = 0
                        continue
                    }
                    // channel = premultiplied × 255 / (alpha × 255 / 255), rounded.
                    for channel in 0..<3 {
                        let value = (Int64(current[index + channel]) * 255 + Int64(alpha) / 2) / Int64(alpha)
                        pixels[index + channel] = UInt8(min(255, max(0, value)))
                    }
                    pixels[index + 3] = UInt8(min(255, straightAlpha))
                }
            }
        }

        /// One convolution with `weights` (`2 × radius + 1` of them) along a line of `length` pixels
        /// `step` values apart, all four channels; indices past the ends read the end pixels.
        private static func kernelPass(_ from: UnsafePointer<Int32>, _ to: UnsafeMutablePointer<Int32>,
                                       length: Int, step: Int, weights: [Float], radius: Int) {
            let last = length - 1
            weights.withUnsafeBufferPointer { weights in
                for i in 0..<length {
                    var sum = SIMD4<Float>.zero
                    for tap in -radius...radius {
                        let pixel = from + min(max(i + tap, 0), last) * step
                        sum += SIMD4(Float(pixel[0]), Float(pixel[1]), Float(pixel[2]), Float(pixel[3])) * weights[tap + radius]
                    }
                    let out = to + i * step
                    out[0] = Int32(sum[0].rounded()); out[1] = Int32(sum[1].rounded())
                    out[2] = Int32(sum[2].rounded()); out[3] = Int32(sum[3].rounded())
                }
            }
        }

        /// One box blur of `2 × radius + 1` along a line of `length` pixels `step` values apart, all
        /// four channels, with a running sum; indices past the ends read the end pixels.
        private static func boxPass(_ from: UnsafePointer<Int32>, _ to: UnsafeMutablePointer<Int32>,
                                    length: Int, step: Int, radius: Int) {
            let window = Int64(2 * radius + 1)
            let last = length - 1
            for channel in 0..<4 {
                let line = from + channel, out = to + channel
                var sum = Int64(radius + 1) * Int64(line[0])
                for i in 1...radius { sum += Int64(line[min(i, last) * step]) }
                for i in 0..<length {
                    out[i * step] = Int32((sum + window / 2) / window)
                    sum += Int64(line[min(i + radius + 1, last) * step]) - Int64(line[max(i - radius, 0) * step])
                }
            }
        }
    }
}
