extension ImageTransformers {
    /// Composites a mark (a logo, with its alpha) over every frame: scaled to a fraction of the
    /// frame's width, placed by a gravity with a margin, at an opacity (straight-alpha "over",
    /// as Pillow's `alpha_composite`).
    public struct Watermark: ImageTransformer {
        /// The mark's pixels.
        public var mark: Bitmap
        /// A name for the mark that changes when its pixels do (a hash of its file): part of the
        /// identifier, since pixels are not.
        public var markName: String
        /// How opaque the mark is, 0...1 (its own alpha times this).
        public var opacity: Double
        /// Where the mark goes.
        public var gravity: Gravity
        /// The mark's width as a fraction of the frame's width, 0...1 (its aspect ratio kept).
        public var widthFraction: Double
        /// The gap between the mark and the edges it sits against, as a fraction of the frame's
        /// shorter side.
        public var marginFraction: Double

        /// Creates a watermark of `mark` (named `markName` in the identifier).
        public init(mark: Bitmap, markName: String, opacity: Double = 1, gravity: Gravity = .bottomRight,
                    widthFraction: Double = 0.25, marginFraction: Double = 0.02) {
            self.mark = mark
            self.markName = markName
            self.opacity = opacity
            self.gravity = gravity
            self.widthFraction = widthFraction
            self.marginFraction = marginFraction
        }

        /// `"watermark(NAME,OPACITY,GRAVITY,WIDTH,MARGIN)"`, e.g. `"watermark(logo,0.5,bottom-right,0.25,0.02)"`.
        public var identifier: String {
            "watermark(\(markName),\(TransformSupport.format(opacity)),\(gravity.name),"
                + "\(TransformSupport.format(widthFraction)),\(TransformSupport.format(marginFraction)))"
        }

        /// Composites the mark over every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let alpha = opacity.isFinite ? min(max(opacity, 0), 1) : 0
            let fraction = widthFraction.isFinite ? min(max(widthFraction, 0), 1) : 0
            let width = Int((Double(image.width) * fraction).rounded())
            let height = Int((Double(width) * Double(mark.height) / Double(mark.width)).rounded())
            guard alpha > 0, width > 0, height > 0 else { return image }
            try TransformSupport.checkSize(width: width, height: height, identifier)
            let scaled = try Resampler.resize(mark, width: width, height: height, filter: .lanczos3, twoThreadsFrom: .max)
            let margin = Int((Double(min(image.width, image.height)) * (marginFraction.isFinite ? min(max(marginFraction, 0), 0.5) : 0)).rounded())
            // Placed inside the frame less the margin on every side (or the whole frame when the
            // margin leaves no room).
            let room = (width: image.width - 2 * margin, height: image.height - 2 * margin)
            let inset = room.width >= width && room.height >= height ? margin : 0
            let area = inset > 0 ? room : (image.width, image.height)
            let origin = gravity.origin(inner: (width, height), outer: area)
            let opacity = UInt32((alpha * 255).rounded())
            var result = try image.mappingFrames { frame in
                try Self.composite(scaled, over: frame, at: (origin.x + inset, origin.y + inset), opacity: opacity)
            }
            result.hasAlpha = image.hasAlpha
            return result
        }

        /// `top` composited over `bottom` with its top-left corner at `at` (clipped to `bottom`).
        static func composite(_ top: Bitmap, over bottom: Bitmap, at origin: (x: Int, y: Int), opacity: UInt32) throws -> Bitmap {
            try top.withUnsafeBytes { mark in
                try bottom.withUnsafeBytes { source in
                    try Bitmap(width: bottom.width, height: bottom.height) { target in
                        target.copyMemory(from: source)
                        let pixels = target.bindMemory(to: UInt8.self)
                        let top0 = max(0, origin.y), bottom0 = min(bottom.height, origin.y + top.height)
                        let left0 = max(0, origin.x), right0 = min(bottom.width, origin.x + top.width)
                        guard bottom0 > top0, right0 > left0 else { return }
                        for y in top0..<bottom0 {
                            for x in left0..<right0 {
                                let m = ((y - origin.y) * top.width + (x - origin.x)) * 4
                                let o = (y * bottom.width + x) * 4
                                let out = Compositing.over((mark[m], mark[m + 1], mark[m + 2], mark[m + 3]),
                                                           onto: (pixels[o], pixels[o + 1], pixels[o + 2], pixels[o + 3]),
                                                           opacity: opacity)
                                pixels[o] = out.0; pixels[o + 1] = out.1; pixels[o + 2] = out.2; pixels[o + 3] = out.3
                            }
                        }
                    }
                }
            }
        }
    }
}
