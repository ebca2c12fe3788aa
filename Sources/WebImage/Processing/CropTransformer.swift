extension ImageTransformers {
    /// Cuts a rectangle, in pixels of the image as stored, out of every frame.
    ///
    /// The rectangle is clipped to the image, so a crop that hangs over an edge returns the part
    /// inside. A rectangle that does not overlap the image at all, or has a side that is not
    /// positive, throws ``WebImageError/corruptData(_:)`` ("invalid transform: ..."): `WebImageError`
    /// has no dedicated case for bad transform parameters, and that is the case ``Bitmap`` and
    /// ``Resampler`` use for impossible sizes.
    public struct Crop: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// Left edge, in pixels from the left of the image.
        public var x: Int
        /// Top edge, in pixels from the top of the image.
        public var y: Int
        /// Width of the rectangle in pixels.
        public var width: Int
        /// Height of the rectangle in pixels.
        public var height: Int
        /// When set, the rectangle is placed by this gravity instead of at (``x``, ``y``)
        /// (a focal point centres it there, as far as the edges allow).
        public var gravity: Gravity?

        /// Creates a crop of the rectangle at (`x`, `y`) of `width` × `height` pixels.
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// Creates a crop of `width` × `height` pixels placed by `gravity` (a side longer than
        /// the image's keeps the whole side).
        public init(width: Int, height: Int, gravity: Gravity) {
            self.init(x: 0, y: 0, width: width, height: height)
            self.gravity = gravity
        }

        /// `"crop(x,y,WxH)"`, e.g. `"crop(10,20,100x50)"`; placed by gravity, `"crop(WxH,GRAVITY)"`,
        /// e.g. `"crop(100x50,top-left)"`.
        public var identifier: String {
            if let gravity { return "crop(\(width)x\(height),\(gravity.name))" }
            return "crop(\(x),\(y),\(width)x\(height))"
        }

        /// Crops every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            var (left, top) = (x, y)
            if let gravity {
                guard width > 0, height > 0 else { throw TransformSupport.invalid("crop to \(width)×\(height)") }
                let inner = (width: min(width, image.width), height: min(height, image.height))
                (left, top) = gravity.origin(inner: inner, outer: (image.width, image.height))
            }
            return try image.mappingFrames { try $0.cropped(x: left, y: top, width: width, height: height) }
        }
    }
}
