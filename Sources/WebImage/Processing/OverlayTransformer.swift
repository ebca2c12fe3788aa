extension ImageTransformers {
    /// Composites a mark over every frame with its top-left corner at a pixel position, which
    /// may lie partly or wholly outside the frame (the mark is clipped): straight-alpha "over",
    /// as ``Watermark`` composites, for callers that place the mark themselves (thumbor's
    /// `watermark()` filter, served by `WebImageServer`).
    public struct Overlay: ImageTransformer {
        /// The mark's pixels, at the size they are composited.
        public var mark: Bitmap
        /// A name for the mark that changes when its pixels do: part of the identifier.
        public var markName: String
        /// The mark's left edge in the frame's pixels.
        public var x: Int
        /// The mark's top edge in the frame's pixels.
        public var y: Int

        /// An overlay of `mark` (named `markName` in the identifier) at `x`, `y`.
        public init(mark: Bitmap, markName: String, x: Int, y: Int) {
            self.mark = mark
            self.markName = markName
            self.x = x
            self.y = y
        }

        /// `"overlay(NAME,X,Y)"`.
        public var identifier: String { "overlay(\(markName),\(x),\(y))" }

        /// Composites the mark over every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            var result = try image.mappingFrames { try Watermark.composite(mark, over: $0, at: (x, y), opacity: 255) }
            result.hasAlpha = image.hasAlpha
            return result
        }
    }
}
