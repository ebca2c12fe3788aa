/// Decides when a progressive load decodes another partial image: never while one is in flight
/// (the caller's rule), and then only when at least ``minimumInterval`` has passed since the last
/// one started and the data has grown by at least ``minimumGrowth`` bytes since.
///
/// The partial data itself comes at geometrically growing sizes (``PartialDataThrottle``); this
/// bounds the decodes in time as well, so a fast link does not pay for previews nobody can see
/// before the final image replaces them.
struct PartialDecodeThrottle: Sendable {
    /// The least time between the starts of two partial decodes.
    static let minimumInterval: Duration = .milliseconds(100)
    /// The least growth of the data between two partial decodes, in bytes.
    static let minimumGrowth = 8 * 1024

    private var lastStart: ContinuousClock.Instant?
    private var lastCount = 0

    /// Whether a partial decode of `count` bytes may start at `now`; records it when so.
    mutating func shouldDecode(count: Int, now: ContinuousClock.Instant = .now) -> Bool {
        if let lastStart {
            guard now - lastStart >= Self.minimumInterval, count >= lastCount + Self.minimumGrowth else { return false }
        }
        lastStart = now
        lastCount = count
        return true
    }
}
