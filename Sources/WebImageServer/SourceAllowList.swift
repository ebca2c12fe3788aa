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
/// A URL with user information is refused too: a list names places, not accounts.
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
    static func hostMatches(pattern: [UInt8], host: [UInt8]) -> Bool {
        func match(_ p: Int, _ h: Int) -> Bool {
            if p == pattern.count { return h == host.count }
            if pattern[p] != UInt8(ascii: "*") {
                return h < host.count && host[h] == pattern[p] && match(p + 1, h + 1)
            }
            // One or more label characters; the pattern has no `**`, so this recursion is bounded
            // by the host's length times the number of stars.
            var end = h
            while end < host.count, host[end] != UInt8(ascii: "."), host[end] != UInt8(ascii: "/") {
                end += 1
                if match(p + 1, end) { return true }
            }
            return false
        }
        return match(0, 0)
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
    private static func redacted(_ url: URL) -> String {
        let text = url.absoluteString
        return String(text.prefix { $0 != "?" })
    }
}
