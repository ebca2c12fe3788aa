extension ImageBinding {
    /// How a target should change from what it shows to a newly loaded image (SDWebImage's
    /// `sd_imageTransition`), described platform-neutrally: the binding hands it to
    /// ``ImageTarget/setImage(_:transition:)`` and the target animates it with what its platform has.
    public struct Transition: Sendable, Hashable {
        /// The kind of change.
        public enum Kind: Sendable, Hashable {
            /// Cross-fade from the old image to the new one.
            case fade
            /// Flip or curl in from a side (`"left"`, `"right"`, `"top"`, `"bottom"`).
            case flip(from: String)
            /// A change the target knows by name.
            case custom(String)
        }

        public var kind: Kind
        /// How long the change takes, in seconds.
        public var duration: Double

        public init(kind: Kind, duration: Double) {
            self.kind = kind
            self.duration = max(0, duration)
        }

        /// A cross-fade of `duration` seconds.
        public static func fade(duration: Double = 0.25) -> ImageBinding.Transition { ImageBinding.Transition(kind: .fade, duration: duration) }
    }
}

/// The name this had before it was grouped under ``ImageBinding``.
package typealias ImageTransition = ImageBinding.Transition
