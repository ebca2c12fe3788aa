extension ImageTransformers {
    /// Sharpens every frame with an unsharp mask, as Pillow's `UnsharpMask` and libvips'
    /// `sharpen` do: each colour channel moves away from its Gaussian-blurred value by
    /// ``amount`` times the difference, where that difference is at least ``threshold``.
    /// Alpha is kept; the blur is ``Blur``'s.
    public struct Sharpen: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The blur's standard deviation in pixels (Pillow's `radius`). Not positive or not
        /// finite: the image is left unchanged; above 1000 acts as 1000.
        public var sigma: Double
        /// How much of the difference is added: 1.5 adds 150 % (Pillow's `percent` / 100).
        public var amount: Double
        /// The smallest difference (0...255) that is sharpened, so flat noise is left alone.
        public var threshold: Int

        /// Creates an unsharp mask; the defaults are Pillow's (`percent=150, threshold=3`).
        public init(sigma: Double, amount: Double = 1.5, threshold: Int = 3) {
            self.sigma = sigma
            self.amount = amount
            self.threshold = threshold
        }

        /// `"sharpen(SIGMA,AMOUNT,THRESHOLD)"`, e.g. `"sharpen(1,1.5,3)"`.
        public var identifier: String {
            "sharpen(\(TransformSupport.format(sigma)),\(TransformSupport.format(amount)),\(threshold))"
        }

        /// Sharpens every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let radius = sigma.isFinite && sigma > 0 ? min(sigma, 1000) : 0
            guard amount.isFinite, amount != 0, radius > 0 else { return image }
            // The amount in 1/256ths, so the per-pixel work is integer.
            let gain = Int32((min(max(amount, -100), 100) * 256).rounded())
            let minimum = Int32(min(max(threshold, 0), 256))
            return try image.mappingFrames { bitmap in
                let blurred = try Blur.blurred(bitmap, sigma: radius)
                return try blurred.withUnsafeBytes { blurredBytes in
                    try bitmap.mappingPixels { from, to, offset in
                        for channel in offset..<(offset + 3) {
                            let original = Int32(from[channel])
                            let difference = original - Int32(blurredBytes[channel])
                            guard abs(difference) >= minimum else { to[channel] = from[channel]; continue }
                            let value = original + (difference * gain + 128) >> 8
                            to[channel] = UInt8(min(max(value, 0), 255))
                        }
                        to[offset + 3] = from[offset + 3]
                    }
                }
            }
        }
    }
}
