#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AnimatedImagePlayer {
    /// The time an ``AnimatedImagePlayer`` plays by. Inject one to drive playback from a display
    /// link's timestamps, or from a test.
    public protocol Clock: Sendable {
        /// Seconds since a fixed origin of the clock's choosing; never decreases.
        func now() -> Double
    }
}

extension AnimatedImagePlayer {
    /// The monotonic system clock (`ContinuousClock`), counted from when the value was made.
    public struct SystemClock: AnimatedImagePlayer.Clock {
        private let origin = ContinuousClock.now

        /// Creates a clock whose `now()` starts at 0.
        public init() {}

        public func now() -> Double {
            let elapsed = ContinuousClock.now - origin
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }
}

/// The name this had before it was grouped under ``AnimatedImagePlayer``.
package typealias AnimationClock = AnimatedImagePlayer.Clock

/// The name this had before it was grouped under ``AnimatedImagePlayer``.
package typealias SystemAnimationClock = AnimatedImagePlayer.SystemClock
