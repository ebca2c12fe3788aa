extension ImageTransformers {
    /// A cropping resize (``Resize/Mode/fill``) that keeps the most salient part of the image
    /// instead of the middle, as libvips' `attention` strategy: edges, saturated colour and skin
    /// tones count as interesting, flat areas do not.
    ///
    /// Saliency is measured on a copy downscaled to at most ``analysisSide`` pixels a side (never
    /// on the full bitmap); the window of the crop's aspect ratio with the most of it becomes a
    /// focal point for ``Resize``. All frames of an animation get the first frame's crop.
    public struct SmartCrop: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// Target width in pixels.
        public var width: Int
        /// Target height in pixels.
        public var height: Int
        /// Whether images smaller than the target are enlarged (as ``Resize/allowUpscaling``).
        public var allowUpscaling: Bool
        /// The resampling kernel of the resize.
        public var filter: ResamplingFilter

        /// The longest side of the copy saliency is measured on.
        public static let analysisSide = 96

        /// Creates a smart crop to `width` × `height` pixels.
        public init(width: Int, height: Int, filter: ResamplingFilter = .lanczos3, allowUpscaling: Bool = false) {
            self.width = width
            self.height = height
            self.filter = filter
            self.allowUpscaling = allowUpscaling
        }

        /// `"smartCrop(WxH,filter)"`, with `",upscale"` when ``allowUpscaling`` is set.
        public var identifier: String { "smartCrop(\(width)x\(height),\(filter.rawValue)\(allowUpscaling ? ",upscale" : ""))" }

        /// Crops and resizes every frame; durations are kept.
        /// - Throws: as ``Resize/transform(_:)``.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            try resize(for: image.bitmap).transform(image)
        }

        /// The resize that keeps the most salient window of `bitmap`.
        func resize(for bitmap: Bitmap) throws -> Resize {
            var resize = Resize(width: width, height: height, mode: .fill, filter: filter, allowUpscaling: allowUpscaling)
            guard let crop = try resize.plan(width: bitmap.width, height: bitmap.height).crop else { return resize }
            resize.gravity = try Self.focus(of: bitmap, window: (crop.width, crop.height))
            return resize
        }

        /// The centre of the `window`-sized rectangle of `bitmap` with the most saliency, as a
        /// focal point.
        static func focus(of bitmap: Bitmap, window: (width: Int, height: Int)) throws -> Gravity {
            let size = Resampler.fittingSize(width: bitmap.width, height: bitmap.height, maxPixelSize: analysisSide)
            let small = try Resampler.resize(bitmap, width: size.width, height: size.height, filter: .triangle,
                                             twoThreadsFrom: .max)
            let scaleX = Double(small.width) / Double(bitmap.width), scaleY = Double(small.height) / Double(bitmap.height)
            let windowWidth = min(small.width, max(1, Int((Double(window.width) * scaleX).rounded())))
            let windowHeight = min(small.height, max(1, Int((Double(window.height) * scaleY).rounded())))
            let table = SummedArea(saliency(of: small), width: small.width, height: small.height)
            var best = (x: (small.width - windowWidth) / 2, y: (small.height - windowHeight) / 2)
            var bestScore = table.sum(x: best.x, y: best.y, width: windowWidth, height: windowHeight)
            for y in 0...(small.height - windowHeight) {
                for x in 0...(small.width - windowWidth) {
                    let score = table.sum(x: x, y: y, width: windowWidth, height: windowHeight)
                    // Strictly more: on a tie the middle (tried first) stays.
                    if score > bestScore { (best, bestScore) = ((x, y), score) }
                }
            }
            return .focus(x: (Double(best.x) + Double(windowWidth) / 2) / Double(small.width),
                          y: (Double(best.y) + Double(windowHeight) / 2) / Double(small.height))
        }

        /// Per pixel of `bitmap`: edge strength of the luma (a Laplacian), plus saturation, plus
        /// a skin-tone score, weighted by opacity.
        static func saliency(of bitmap: Bitmap) -> [Double] {
            let width = bitmap.width, height = bitmap.height
            return bitmap.withUnsafeBytes { bytes -> [Double] in
                var luma = [Double](repeating: 0, count: width * height)
                var colour = [Double](repeating: 0, count: width * height)
                for index in 0..<(width * height) {
                    let r = Double(bytes[index * 4]), g = Double(bytes[index * 4 + 1]), b = Double(bytes[index * 4 + 2])
                    let alpha = Double(bytes[index * 4 + 3]) / 255
                    luma[index] = (0.299 * r + 0.587 * g + 0.114 * b) * alpha
                    let saturation = (max(r, g, b) - min(r, g, b)) / 255
                    colour[index] = (saturation + skinTone(r, g, b)) * alpha
                }
                var saliency = [Double](repeating: 0, count: width * height)
                for y in 0..<height {
                    for x in 0..<width {
                        let index = y * width + x
                        let left = luma[y * width + max(x - 1, 0)], right = luma[y * width + min(x + 1, width - 1)]
                        let up = luma[max(y - 1, 0) * width + x], down = luma[min(y + 1, height - 1) * width + x]
                        let edge = abs(4 * luma[index] - left - right - up - down) / 255
                        saliency[index] = edge + colour[index]
                    }
                }
                return saliency
            }
        }

        /// How close a colour is to a skin tone (libvips' fixed skin hue), 0...1.
        private static func skinTone(_ r: Double, _ g: Double, _ b: Double) -> Double {
            let magnitude = (r * r + g * g + b * b).squareRoot()
            guard magnitude > 0 else { return 0 }
            // Distance from the normalized skin colour (0.78, 0.57, 0.44).
            let dr = r / magnitude - 0.78, dg = g / magnitude - 0.57, db = b / magnitude - 0.44
            let distance = (dr * dr + dg * dg + db * db).squareRoot()
            return max(0, 1 - distance / 0.1) * 0.5
        }
    }
}

/// A summed-area table: the sum of any rectangle of a grid in four reads.
struct SummedArea {
    private let sums: [Double]
    private let stride: Int

    /// The table of `values`, a `width` × `height` grid row by row.
    init(_ values: [Double], width: Int, height: Int) {
        stride = width + 1
        var sums = [Double](repeating: 0, count: (width + 1) * (height + 1))
        for y in 0..<height {
            var row = 0.0
            for x in 0..<width {
                row += values[y * width + x]
                sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row
            }
        }
        self.sums = sums
    }

    /// The sum of the `width` × `height` rectangle at (`x`, `y`) (which must lie in the grid).
    func sum(x: Int, y: Int, width: Int, height: Int) -> Double {
        sums[(y + height) * stride + x + width] - sums[y * stride + x + width] - sums[(y + height) * stride + x] + sums[y * stride + x]
    }
}
