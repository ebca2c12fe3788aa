extension ImageBinding {
    /// A spinner or progress bar a target shows while its image loads (SDWebImage's
    /// `SDWebImageIndicator`). The binding starts it when a load begins and stops it when the load
    /// ends, fails, is cancelled or is replaced by another: every start has its stop.
    @MainActor
    public protocol ActivityIndicator: AnyObject {
        /// The load started.
        func startAnimatingIndicator()
        /// The load ended (whatever the outcome).
        func stopAnimatingIndicator()
        /// The fraction loaded so far (0...1), when the size is known.
        func updateIndicatorProgress(_ fraction: Double)
    }
}

extension ImageBinding.ActivityIndicator {
    /// Ignores progress by default.
    public func updateIndicatorProgress(_ fraction: Double) {}
}

/// The name this had before it was grouped under ``ImageBinding``.
package typealias ImageActivityIndicator = ImageBinding.ActivityIndicator
