extension ImageTransformers {
    /// Lays a colour over every frame where the image is, as Core Graphics' source-atop blend does
    /// (SDWebImage's tint): each pixel's colour moves toward ``color`` by the colour's alpha, and the
    /// pixel's own alpha is kept, so transparent areas stay transparent.
    public struct Tint: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The overlay; its alpha is how strongly it covers (255 paints the shape in a flat colour).
        public var color: RGBAColor

        /// Creates a tint.
        public init(color: RGBAColor) {
            self.color = color
        }

        /// `"tint(#RRGGBBAA)"`, e.g. `"tint(#FF000080)"`.
        public var identifier: String { "tint(\(color.hexString))" }

        /// Tints every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            if color.alpha == 0 { return image }
            let strength = UInt32(color.alpha), keep = 255 - UInt32(color.alpha)
            let red = UInt32(color.red) * strength, green = UInt32(color.green) * strength
            let blue = UInt32(color.blue) * strength
            return try image.mappingFrames { bitmap in
                try bitmap.mappingPixels { from, to, index in
                    to[index] = UInt8((red + UInt32(from[index]) * keep + 127) / 255)
                    to[index + 1] = UInt8((green + UInt32(from[index + 1]) * keep + 127) / 255)
                    to[index + 2] = UInt8((blue + UInt32(from[index + 2]) * keep + 127) / 255)
                    to[index + 3] = from[index + 3]
                }
            }
        }
    }
}
