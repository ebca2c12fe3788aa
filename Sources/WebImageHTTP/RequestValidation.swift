import NIOCore

/// Checks what a request will put on the wire before a connection is touched: a header that is
/// not valid HTTP/1.1 would otherwise fail the write, look like a dead pooled connection, be
/// retried, and close healthy connections on the way.
package enum RequestValidation {
    /// The longest timeout honoured; longer ones (up to `.seconds(.max)`) are clamped to it, so
    /// deadline arithmetic cannot overflow. A year is "never" for a download.
    static let longestTimeout: Duration = .seconds(365 * 24 * 3600)

    /// Why `name: value` cannot be sent as a header field, or `nil` when it can.
    package static func headerProblem(name: String, value: String) -> String? {
        if name.isEmpty { return "empty header name" }
        // RFC 9110 field-name: a token.
        if !name.utf8.allSatisfy(isTokenByte) { return "header name \(name.debugDescription) is not an HTTP token" }
        // RFC 9110 field-value: visible characters, spaces and tabs, and obs-text (bytes >= 0x80);
        // no CR, LF, NUL or other controls.
        if value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return "header \(name) has a control character (CR, LF, NUL...) in its value"
        }
        return nil
    }

    /// Throws ``HTTPLoadError/invalidRequest(_:)`` for the first header that cannot be sent.
    static func validate(_ headers: [String: String]) throws(HTTPLoadError) {
        for (name, value) in headers {
            if let problem = headerProblem(name: name, value: value) { throw .invalidRequest(problem) }
        }
    }

    /// `timeout` as a positive event-loop amount, clamped to ``longestTimeout``; throws
    /// ``HTTPLoadError/invalidRequest(_:)`` when it is zero or negative (`what` names it).
    static func timeAmount(_ timeout: Duration, _ what: String) throws(HTTPLoadError) -> TimeAmount {
        guard timeout > .zero else { throw .invalidRequest("\(what) must be positive, got \(timeout)") }
        return clamped(timeout)
    }

    /// `timeout` as an event-loop amount between 1 ns and ``longestTimeout``, never trapping.
    static func clamped(_ timeout: Duration) -> TimeAmount {
        let bounded = min(max(timeout, .nanoseconds(1)), longestTimeout)
        let (seconds, attoseconds) = bounded.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
