extension ImageTransformers {
    /// Cuts a rectangle, in pixels of the image as stored, out of every frame.
    ///
    /// The rectangle is clipped to the image, so a crop that hangs over an edge returns the part
    /// inside. A rectangle that does not overlap the image at all, or has a side that is not
    /// positive, throws ``WebImageError/corruptData(_:)`` ("invalid transform: ..."): `WebImageError`
    /// has no dedicated case for bad transform parameters, and that is the case ``Bitmap`` and
    /// ``Resampler`` use for impossible sizes.
    public struct Crop: ImageTransformer, Hashable {
        /// Left edge, in pixels from the left of the image.
        public var x: Int
        /// Top edge, in pixels from the top of the image.
        public var y: Int
        /// Width of the rectangle in pixels.
        public var width: Int
        /// Height of the rectangle in pixels.
        public var height: Int

        /// Creates a crop of the rectangle at (`x`, `y`) of `width` × `height` pixels.
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// `"crop(x,y,WxH)"`, e.g. `"crop(10,20,100x50)"`.
        public var identifier: String { "crop(\(x),\(y),\(width)x\(height))" }

        /// Crops every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            try image.mappingFrames { try $0.cropped(x: x, y: y, width: width, height: height) }
        }
    }
}
