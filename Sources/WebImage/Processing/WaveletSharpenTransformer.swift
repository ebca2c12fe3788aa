#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ImageTransformers {
    /// Sharpens every frame with Marco Rossini's wavelet sharpen (the GIMP plug-in thumbor's
    /// `sharpen(amount, radius, luminance_only)` is built on): each channel is split into five
    /// detail levels by an à trous "hat" wavelet, each level amplified by
    /// `amount × exp(−(level − radius)² / 1.5) + 1`, and the levels added back.
    ///
    /// The arithmetic is thumbor's, in single precision and in its order, so a service speaking
    /// thumbor's URLs gives thumbor's pixels (sides of 32 pixels or more; on smaller ones thumbor's
    /// C reads past its rows, where this one reflects at the edges). Alpha is kept.
    public struct WaveletSharpen: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// How much each level is amplified; 0 leaves the image as it is.
        public var amount: Double
        /// Which level is amplified most (0 the finest, 4 the coarsest).
        public var radius: Double
        /// Only the luma (ITU-R BT.601 Y of YCbCr) is sharpened; the chroma is kept.
        public var luminanceOnly: Bool

        /// Set when the work should stop (a render past its deadline): checked between channels
        /// and levels, each a few passes over the frame.
        package var stop = StopFlag()

        /// The number of wavelet levels, as the plug-in's.
        static let levels = 5

        /// A wavelet sharpen of `amount` around level `radius`.
        public init(amount: Double, radius: Double, luminanceOnly: Bool = false) {
            self.amount = amount
            self.radius = radius
            self.luminanceOnly = luminanceOnly
        }

        /// `"waveletSharpen(AMOUNT,RADIUS[,luma])"`.
        public var identifier: String {
            "waveletSharpen(\(TransformSupport.format(amount)),\(TransformSupport.format(radius))\(luminanceOnly ? ",luma" : ""))"
        }

        /// Sharpens every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            guard amount.isFinite, radius.isFinite else { return image }
            // Per level, as the plug-in computes it (double, stored in a float).
            let gains = (0..<Self.levels).map { level -> Float in
                let offset = Double(level) - radius
                return Float(amount * exp(-offset * offset / Double(Float(1.5))) + 1)
            }
            let luminanceOnly = self.luminanceOnly, stop = self.stop
            return try image.mappingFrames { bitmap in
                try Self.sharpened(bitmap, gains: gains, luminanceOnly: luminanceOnly, stop: stop)
            }
        }

        private static func sharpened(_ bitmap: Bitmap, gains: [Float], luminanceOnly: Bool, stop: StopFlag) throws -> Bitmap {
            let (width, height) = (bitmap.width, bitmap.height)
            let area = width * height
            return try bitmap.withUnsafeBytes { raw in
                let source = raw.bindMemory(to: UInt8.self)
                // The channels as thumbor holds them: 0...1, in YCbCr when only the luma is sharpened;
                // then two planes for the low passes and a row's scratch.
                var planes = [Float](repeating: 0, count: area * 5 + max(width, height))
                try planes.withUnsafeMutableBufferPointer { buffer in
                    let all = buffer
                    func plane(_ index: Int) -> UnsafeMutableBufferPointer<Float> {
                        UnsafeMutableBufferPointer(rebasing: all[(index * area)..<((index + 1) * area)])
                    }
                    for index in 0..<area {
                        var pixel = (Float(source[index * 4]), Float(source[index * 4 + 1]), Float(source[index * 4 + 2]))
                        if luminanceOnly { pixel = Self.ycbcr(pixel) }
                        all[index] = pixel.0 / 255
                        all[area + index] = pixel.1 / 255
                        all[2 * area + index] = pixel.2 / 255
                    }
                    let scratch = UnsafeMutableBufferPointer(rebasing: all[(area * 5)...])
                    for channel in 0..<(luminanceOnly ? 1 : 3) {
                        try wavelet(plane(channel), (plane(3), plane(4)), scratch, width: width, height: height, gains: gains, stop: stop)
                    }
                }
                return try Bitmap(width: width, height: height) { target in
                    let pixels = target.bindMemory(to: UInt8.self)
                    for index in 0..<area {
                        var pixel = (planes[index] * 255, planes[area + index] * 255, planes[2 * area + index] * 255)
                        if luminanceOnly { pixel = Self.rgb(pixel) }
                        // thumbor clamps, then its float-to-byte store truncates (NaN, from an infinite gain, is 0).
                        func byte(_ value: Float) -> UInt8 { value > 255 ? 255 : value >= 0 ? UInt8(value) : 0 }
                        pixels[index * 4] = byte(pixel.0)
                        pixels[index * 4 + 1] = byte(pixel.1)
                        pixels[index * 4 + 2] = byte(pixel.2)
                        pixels[index * 4 + 3] = source[index * 4 + 3]
                    }
                }
            }
        }

        /// The plug-in's `wavelet_sharpen` on one plane: `image` is level 0's input and the
        /// result; `lows` the two planes the low passes alternate between.
        private static func wavelet(_ image: UnsafeMutableBufferPointer<Float>, _ lows: (UnsafeMutableBufferPointer<Float>, UnsafeMutableBufferPointer<Float>),
                                    _ scratch: UnsafeMutableBufferPointer<Float>, width: Int, height: Int, gains: [Float],
                                    stop: StopFlag) throws {
            let planes = [image, lows.0, lows.1]
            var high = 0
            var lowPass = 1
            for level in 0..<levels {
                try stop.check()
                lowPass = (level & 1) + 1
                let spacing = 1 << level
                let (source, low) = (planes[high], planes[lowPass])
                for row in 0..<height {
                    hat(scratch, source, start: row * width, stride: 1, count: width, spacing: spacing)
                    for column in 0..<width { low[row * width + column] = scratch[column] * 0.25 }
                }
                for column in 0..<width {
                    hat(scratch, low, start: column, stride: width, count: height, spacing: spacing)
                    for row in 0..<height { low[row * width + column] = scratch[row] * 0.25 }
                }
                let gain = gains[level]
                for index in 0..<(width * height) {
                    source[index] -= low[index]
                    source[index] *= gain
                    if high != 0 { image[index] += source[index] }
                }
                high = lowPass
            }
            let low = planes[lowPass]
            for index in 0..<(width * height) { image[index] = image[index] + low[index] }
        }

        /// The plug-in's `hat_transform`: `2·x[i] + x[i−s] + x[i+s]`, reflected at both ends.
        private static func hat(_ output: UnsafeMutableBufferPointer<Float>, _ base: UnsafeMutableBufferPointer<Float>,
                                start: Int, stride: Int, count: Int, spacing: Int) {
            func at(_ index: Int) -> Float {
                // Reflected as the plug-in reflects (−i → i, size−1+k → size−1−k), again for a
                // spacing longer than the side, where the plug-in reads outside its row.
                var index = index
                while index < 0 || index >= count {
                    if count == 1 { index = 0; break }
                    index = index < 0 ? -index : 2 * count - 2 - index
                }
                return base[start + stride * index]
            }
            let inner = max(spacing, 0)..<max(spacing, count - spacing)
            for index in 0..<count {
                if inner.contains(index) {
                    output[index] = 2 * base[start + stride * index] + base[start + stride * (index - spacing)]
                        + base[start + stride * (index + spacing)]
                } else {
                    output[index] = 2 * at(index) + at(index - spacing) + at(index + spacing)
                }
            }
        }

        private static func ycbcr(_ p: (Float, Float, Float)) -> (Float, Float, Float) {
            let y: Float = 0.2990 * p.0 + 0.5870 * p.1 + 0.1140 * p.2
            let cb: Float = -0.1687 * p.0 - 0.3313 * p.1 + 0.5000 * p.2 + 128.0
            let cr: Float = 0.5000 * p.0 - 0.4187 * p.1 - 0.0813 * p.2 + 128.0
            return (y, cb, cr)
        }

        private static func rgb(_ p: (Float, Float, Float)) -> (Float, Float, Float) {
            let r: Float = p.0 + 1.40200 * (p.2 - 128.0)
            let g: Float = p.0 - 0.34414 * (p.1 - 128.0) - 0.71414 * (p.2 - 128.0)
            let b: Float = p.0 + 1.77200 * (p.1 - 128.0)
            return (r, g, b)
        }
    }
}
