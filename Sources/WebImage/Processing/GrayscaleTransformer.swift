extension ImageTransformers {
    /// Turns every frame gray: each pixel's red, green and blue become its luma; alpha is kept.
    ///
    /// Luma is the weighted sum of the gamma-encoded (sRGB) channels, as video and most image tools
    /// compute it, not a linear-light luminance.
    public struct Grayscale: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The luma weights.
        public enum Coefficients: String, Sendable, Hashable, CaseIterable {
            /// ITU-R BT.709 (HDTV, sRGB primaries): 0.2126 R + 0.7152 G + 0.0722 B. Matches the primaries
            /// of web images.
            case rec709
            /// ITU-R BT.601 (SDTV, JPEG's YCbCr): 0.299 R + 0.587 G + 0.114 B. What Pillow's `convert("L")` uses.
            case rec601

            /// The weights in ten-thousandths, summing to 10 000 so white stays 255.
            var weights: (red: UInt32, green: UInt32, blue: UInt32) {
                switch self {
                case .rec709: (2126, 7152, 722)
                case .rec601: (2990, 5870, 1140)
                }
            }
        }

        /// The luma weights.
        public var coefficients: Coefficients

        /// Creates a grayscale transform; Rec. 709 unless told otherwise.
        public init(coefficients: Coefficients = .rec709) {
            self.coefficients = coefficients
        }

        /// `"grayscale(rec709)"` or `"grayscale(rec601)"`.
        public var identifier: String { "grayscale(\(coefficients.rawValue))" }

        /// Converts every frame; durations and alpha are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let (wr, wg, wb) = coefficients.weights
            return try image.mappingFrames { bitmap in
                try bitmap.mappingPixels { from, to, index in
                    let sum = UInt32(from[index]) * wr + UInt32(from[index + 1]) * wg + UInt32(from[index + 2]) * wb
                    let luma = UInt8((sum + 5000) / 10000)
                    to[index] = luma; to[index + 1] = luma; to[index + 2] = luma
                    to[index + 3] = from[index + 3]
                }
            }
        }
    }
}
