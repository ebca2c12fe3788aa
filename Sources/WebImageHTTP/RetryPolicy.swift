#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageSupport

/// How a failed HTTP load is sent again after a transient failure, like Kingfisher's
/// `DelayRetryStrategy`. Off by default (a `nil` retry policy): a retry multiplies the load on a
/// server that is already failing and delays the error a UI may want to show, so a caller opts in.
///
/// Retried: the transient failures (`HTTPLoadError.isTransient`, one rule for the stack): no connection or a connection
/// lost, a body cut short, no bytes for the idle timeout, and the statuses 408, 429, 500, 502, 503
/// and 504. Never retried: other statuses, untrusted certificates, refused redirects, limits,
/// cancellation, the resource timeout, or an error the caller's sink threw.
///
/// Retry *n* waits ``baseDelay`` × 2^(n−1), at most ``maxDelay``, less a random part of up
/// to ``jitter`` of it (so that many clients do not come back at once). A `Retry-After` the
/// server sends (seconds or an HTTP date) replaces the computed wait, capped at ``maxDelay``
/// too. No wait runs past the load's resource timeout: the load fails instead.
///
/// Bytes already handed to a progressive caller (partial data) are never taken back: such a
/// load is retried only when the server takes byte ranges (`Accept-Ranges: bytes`) and gave a
/// validator (a strong `ETag` or `Last-Modified`), and then it resumes where it stopped (`Range`
/// with `If-Range`); a server that answers with anything but that range fails it.
public struct HTTPRetryPolicy: Sendable, Hashable {
    /// How many times a load is sent again after its first try (none when zero or less).
    public var maxRetries: Int
    /// The wait before the first retry; it doubles with each next one.
    public var baseDelay: Duration
    /// The longest wait, computed or asked for with `Retry-After`.
    public var maxDelay: Duration
    /// The random part of each computed wait, from 0 (none) to 1 (anywhere from no wait to the full one).
    public var jitter: Double
    /// A random number in `0..<1`; replaceable so that tests see fixed waits.
    package var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// A policy of `maxRetries` retries, waiting `baseDelay` then doubling, at most `maxDelay`.
    public init(maxRetries: Int = 2, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(30),
                jitter: Double = 0.5) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
    }

    package init(maxRetries: Int, baseDelay: Duration, maxDelay: Duration, jitter: Double,
                 random: @escaping @Sendable () -> Double) {
        self.init(maxRetries: maxRetries, baseDelay: baseDelay, maxDelay: maxDelay, jitter: jitter)
        self.random = random
    }

    /// Whether two policies wait and retry alike (the random source, a test seam, is not compared).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.maxRetries == rhs.maxRetries && lhs.baseDelay == rhs.baseDelay && lhs.maxDelay == rhs.maxDelay
            && lhs.jitter == rhs.jitter
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(maxRetries)
        hasher.combine(baseDelay)
        hasher.combine(maxDelay)
        hasher.combine(jitter)
    }

    /// Whether a load that failed with `error` may be sent again: a transient failure
    /// (``HTTPLoadError/isTransient``, the one rule) other than a cancellation, whose caller left.
    package static func retries(_ error: HTTPLoadError) -> Bool {
        if case .cancelled = error { return false }
        return error.isTransient
    }

    /// The wait before retry number `retry` (from 1): `baseDelay` doubled each time, capped at
    /// `maxDelay`, less a random part of up to `jitter` of it; a `retryAfter` the server asked
    /// for replaces it, capped at `maxDelay` too. Never negative.
    package func delay(beforeRetry retry: Int, retryAfter: Duration?) -> Duration {
        let cap = max(0, Self.seconds(maxDelay))
        if let retryAfter { return Self.duration(min(max(0, Self.seconds(retryAfter)), cap)) }
        let doublings = UInt64(1) << UInt64(min(max(retry - 1, 0), 62))
        let computed = min(max(0, Self.seconds(baseDelay)) * Double(doublings), cap)
        let spread = min(max(jitter.isFinite ? jitter : 0, 0), 1)
        let fraction = min(max(random(), 0), 1)
        return Self.duration(computed * (1 - spread * fraction))
    }

    /// The wait a `Retry-After` value asks for: delay-seconds, or an HTTP date (IMF-fixdate,
    /// `Sun, 06 Nov 1994 08:49:37 GMT`) less `now`. `nil` for anything else; a date past gives zero.
    package static func retryAfter(_ value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingSpacesAndTabs
        if !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) {
            // Beyond any cap anyway: saturate rather than overflow.
            return .seconds(Int64(text.prefix(12)) ?? 0)
        }
        guard let date = imfFixdate(text) else { return nil }
        return duration(max(0, date - now.timeIntervalSince1970))
    }

    /// Seconds since 1970 of an IMF-fixdate.
    private static func imfFixdate(_ text: String) -> Double? {
        // "Sun, 06 Nov 1994 08:49:37 GMT"
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int(parts[1]), parts[1].count == 2, let year = Int(parts[3]), parts[3].count == 4 else { return nil }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let monthIndex = months.firstIndex(of: String(parts[2])) else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
              let moment = UTCDateTime(year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second) else { return nil }
        return Double(moment.secondsSince1970)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func duration(_ seconds: Double) -> Duration {
        // Within a century: a wait that long is no wait anyone means, and the conversion stays exact.
        .milliseconds(Int64((min(max(seconds, 0), 3_153_600_000) * 1000).rounded(.up)))
    }
}
