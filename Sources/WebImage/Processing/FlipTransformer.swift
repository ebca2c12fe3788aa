extension ImageTransformers {
    /// Mirrors every frame left to right or top to bottom.
    public struct Flip: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// Which way the image is mirrored.
        public enum Direction: String, Sendable, Hashable, CaseIterable {
            /// Left and right swap (a mirror on the vertical axis).
            case horizontal
            /// Top and bottom swap (a mirror on the horizontal axis).
            case vertical
        }

        /// Which way the image is mirrored.
        public var direction: Direction

        /// Creates a flip.
        public init(_ direction: Direction) {
            self.direction = direction
        }

        /// `"flip(horizontal)"` or `"flip(vertical)"`.
        public var identifier: String { "flip(\(direction.rawValue))" }

        /// Mirrors every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let orientation: ImageOrientation = direction == .horizontal ? .upMirrored : .downMirrored
            return try image.mappingFrames { try $0.applying(orientation) }
        }
    }
}
