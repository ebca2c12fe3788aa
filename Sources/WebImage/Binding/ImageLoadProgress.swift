extension ImageBinding {
    /// How far a target's load is (SDWebImage's `sd_imageProgress`).
    public struct Progress: Sendable, Hashable {
        /// Bytes received.
        public var received: Int64
        /// Bytes expected, when the server said.
        public var expected: Int64?
        /// Whether the load ended with an image (received then equals expected when known).
        public var isFinished: Bool

        public init(received: Int64, expected: Int64?, isFinished: Bool = false) {
            self.received = received
            self.expected = expected
            self.isFinished = isFinished
        }

        /// 0...1 when the size is known or the load finished; `nil` otherwise.
        public var fractionCompleted: Double? {
            if isFinished { return 1 }
            guard let expected, expected > 0 else { return nil }
            return min(1, Double(max(0, received)) / Double(expected))
        }
    }
}

/// The name this had before it was grouped under ``ImageBinding``.
package typealias ImageLoadProgress = ImageBinding.Progress
