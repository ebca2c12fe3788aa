#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--allowed-source PREFIX`: the sources the service may fetch, as imgproxy's
/// `IMGPROXY_ALLOWED_SOURCES` names them (`https://*.cdn.example.com/`, `s3://photos/`,
/// `local:///`). An empty list allows every source (the SSRF guard still applies).
///
/// A prefix is matched against the parsed URL, never against its text, so that a string prefix
/// cannot be fooled by what follows it:
/// - the scheme is compared whole, lowercased;
/// - the host is compared whole, lowercased, a trailing dot dropped: `https://cdn.example.com`
///   matches neither `https://cdn.example.com.evil.com/` nor `https://cdn.example.com@evil.com/`
///   (whose host is `evil.com`). A `*` in the prefix's host stands for one or more characters
///   other than `.` and `/`, so `*.cdn.example.com` matches `a.cdn.example.com` only, not
///   `cdn.example.com` or `a.b.cdn.example.com`;
/// - the port is compared whole; a prefix without one means the scheme's default port;
/// - the prefix's path (default `/`) is a prefix of the URL's path, byte for byte, as in imgproxy:
///   end it with `/` to mean a folder (`/public` also matches `/public-not/`).
///
/// Paths an origin might resolve elsewhere than they read are refused whenever a list is set:
/// a `.` or `..` segment, raw or percent-encoded (`%2e%2e`), and an encoded or raw slash or
/// backslash inside a segment (`%2f`, `%5c`, `\`), which some origins decode before they resolve.
/// A URL with user information is refused too: a list names places, not accounts. So is a host
/// over 253 bytes or with a label over 63 (DNS's limits), before any prefix is matched: the
/// match takes time in the host's length, and the host is anyone's to write.
public struct SourceAllowList: Sendable, Hashable {
    /// One parsed prefix.
    struct Prefix: Sendable, Hashable {
        var scheme: String
        /// Lowercased; may hold `*`.
        var host: String
        var port: Int?
        var path: String
    }

    let prefixes: [Prefix]

    /// The longest host name DNS carries (RFC 1035's 255 octets on the wire, 253 as text).
    static let maxHostBytes = 253
    /// The longest label DNS carries.
    static let maxLabelBytes = 63

    /// Whether any prefix is set (else every source passes this check).
    public var isRestricting: Bool { !prefixes.isEmpty }

    /// The list for `prefixes`.
    /// - Throws: ``ServiceError`` naming a prefix that is not `SCHEME://HOST[:PORT][/PATH]`.
    public init(_ prefixes: [String]) throws {
        self.prefixes = try prefixes.map(Self.parse)
    }

    static func parse(_ text: String) throws -> Prefix {
        func bad(_ why: String) -> ServiceError { .badParameter("bad --allowed-source '\(text)': \(why)") }
        guard let separator = text.range(of: "://") else { throw bad("it needs SCHEME://") }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else {
            throw bad("the scheme is malformed")
        }
        let rest = text[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        guard !authority.contains("@") else { throw bad("user information is not allowed") }
        guard !path.contains("?"), !path.contains("#") else { throw bad("a query or fragment is not allowed") }
        var host = authority.lowercased()
        var port: Int?
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
            guard let number = Int(host[host.index(after: colon)...]), (1...65535).contains(number) else {
                throw bad("the port is malformed")
            }
            port = number
            host = String(host[..<colon])
        }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.*[]:_".contains($0)) }) else {
            throw bad("the host has characters a host cannot have")
        }
        guard !host.contains("**") else { throw bad("'**' is not a pattern; '*' matches one label's characters") }
        if scheme == "http" || scheme == "https" { guard !host.isEmpty else { throw bad("an http(s) prefix needs a host") } }
        return Prefix(scheme: scheme, host: host, port: port, path: path.isEmpty ? "/" : String(path))
    }

    /// Why `url` is not on the list, or `nil` when it is (or when the list is empty).
    public func refusal(for url: URL) -> String? {
        guard isRestricting else { return nil }
        guard let scheme = url.scheme?.lowercased() else { return "the URL has no scheme" }
        if url.user != nil || url.password != nil { return "a source URL with user information is not allowed" }
        var host = (url.host(percentEncoded: true) ?? "").lowercased()
        // A percent-encoded host might decode to another one; hosts are plain ASCII here.
        if host.contains("%") { return "the source host is percent-encoded" }
        // DNS's limits, checked before any matching: no name a resolver accepts is refused.
        if host.utf8.count > Self.maxHostBytes { return "the source host is longer than \(Self.maxHostBytes) bytes" }
        if host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).contains(where: { $0.count > Self.maxLabelBytes }) {
            return "a label of the source host is longer than \(Self.maxLabelBytes) bytes"
        }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        if host.hasPrefix("["), !host.hasSuffix("]") { host = "[" + host + "]" }
        if !host.hasPrefix("["), host.contains(":") { host = "[" + host + "]" }
        let port = url.port ?? Self.defaultPort(scheme)
        var path = url.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        if let reason = Self.ambiguity(inPath: path) { return reason }
        let listed = prefixes.contains { prefix in
            prefix.scheme == scheme
                && Self.hostMatches(pattern: Array(Self.bracketed(prefix.host).utf8), host: Array(host.utf8))
                && (prefix.port ?? Self.defaultPort(scheme)) == port
                && path.hasPrefix(prefix.path)
        }
        return listed ? nil : "\(Self.redacted(url)) is not on the allowed-source list"
    }

    /// Whether the path has a segment an origin might resolve to another place.
    static func ambiguity(inPath path: String) -> String? {
        if path.contains("\\") { return "a backslash in the source path is not allowed" }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            let lower = segment.lowercased()
            if lower.contains("%2f") || lower.contains("%5c") { return "an encoded slash in the source path is not allowed" }
            let decoded = lower.replacingOccurrences(of: "%2e", with: ".")
            if decoded == "." || decoded == ".." { return "a dot segment in the source path is not allowed" }
        }
        return nil
    }

    /// `*` is one or more bytes other than `.` and `/`; everything else is itself.
    ///
    /// A star matches within one label, so the pattern and the host are compared label by label
    /// (as many of each), and each label by a one-pass glob that backtracks only to the last
    /// star (a star as "one byte, then any run"): at most the label's length times the pattern
    /// label's length steps, whatever the number of stars; ``refusal(for:)`` has already refused
    /// a host over 253 bytes or with a label over 63. The former matcher backtracked at every
    /// star: with `*-*-*` a 3.2 KB host took seconds, before any fetch, for anyone.
    static func hostMatches(pattern: [UInt8], host: [UInt8]) -> Bool {
        let dot = UInt8(ascii: ".")
        let patternLabels = pattern.split(separator: dot, omittingEmptySubsequences: false)
        let hostLabels = host.split(separator: dot, omittingEmptySubsequences: false)
        guard patternLabels.count == hostLabels.count else { return false }
        return zip(patternLabels, hostLabels).allSatisfy { labelMatches(pattern: $0, label: $1) }
    }

    /// One label against one pattern label: `*` is one or more bytes other than `/` (no `.` is
    /// left in a label). The classic wildcard walk: on a mismatch, go back to just after the
    /// last star and let it take one more byte.
    private static func labelMatches(pattern: ArraySlice<UInt8>, label: ArraySlice<UInt8>) -> Bool {
        let star = UInt8(ascii: "*"), slash = UInt8(ascii: "/")
        // A star as one required byte (`?`) and a run of any length, so the walk below treats
        // `*` as zero or more.
        enum Token { case byte(UInt8), one, any }
        var tokens: [Token] = []
        tokens.reserveCapacity(pattern.count * 2)
        for byte in pattern { tokens += byte == star ? [.one, .any] : [.byte(byte)] }
        let bytes = Array(label)
        var p = 0, h = 0
        var lastStar: Int?, lastStarMatched = 0
        while h < bytes.count {
            if p < tokens.count, case .any = tokens[p] {
                lastStar = p
                lastStarMatched = h
                p += 1
                continue
            }
            if p < tokens.count, bytes[h] != slash, case .one = tokens[p] {
                p += 1; h += 1
                continue
            }
            if p < tokens.count, case .byte(let expected) = tokens[p], expected == bytes[h] {
                p += 1; h += 1
                continue
            }
            // The last star takes one more byte (never a `/`), and the walk resumes after it.
            guard let star = lastStar, bytes[lastStarMatched] != slash else { return false }
            lastStarMatched += 1
            h = lastStarMatched
            p = star + 1
        }
        while p < tokens.count, case .any = tokens[p] { p += 1 }
        return p == tokens.count
    }

    private static func bracketed(_ host: String) -> String {
        !host.hasPrefix("[") && host.contains(":") ? "[" + host + "]" : host
    }

    static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// The URL without its query, which may carry tokens, for a message.
    static func redacted(_ url: URL) -> String {
        let text = url.absoluteString
        return String(text.prefix { $0 != "?" })
    }
}
