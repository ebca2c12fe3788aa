/// Decides when a growing body's bytes go out as partial data (for progressive decoding): each
/// time they have grown by a quarter, and by at least ``minimumGrowth`` bytes, since the last time.
///
/// Each hand-out shares the body's buffer, so the next append copies the buffer whole, and a
/// progressive decoder decodes the bytes so far again. Handing out at geometrically growing sizes
/// keeps both linear in the body size (at most five times it) instead of quadratic in the number
/// of network reads.
package struct PartialDataThrottle: Sendable {
    /// The least growth between two hand-outs, in bytes.
    package static let minimumGrowth = 8 * 1024

    private var lastCount = 0

    package init() {}

    /// Whether `count` bytes received so far should go out now; records it when so.
    package mutating func shouldDeliver(count: Int) -> Bool {
        guard count >= lastCount + max(Self.minimumGrowth, lastCount / 4) else { return false }
        lastCount = count
        return true
    }
}
