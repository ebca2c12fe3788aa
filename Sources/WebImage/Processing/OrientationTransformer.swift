extension ImageTransformers {
    /// Turns every frame upright by the image's EXIF orientation and reports ``ImageOrientation/up``.
    ///
    /// For when decoding kept the orientation as metadata (the default) and a later step needs
    /// upright pixels, such as a crop in display coordinates.
    public struct Orientation: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// Creates the transform.
        public init() {}

        /// `"orientation"`: the result depends only on the image, which the cache key already names.
        public var identifier: String { "orientation" }

        /// The image turned by ``DecodedImage/applyingOrientation()``; upright images are returned as they are.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            try image.applyingOrientation()
        }
    }
}
