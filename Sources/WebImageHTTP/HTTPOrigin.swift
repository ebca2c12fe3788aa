#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Scheme, host and port: the unit credentials and cookies are bound to.
struct HTTPOrigin: Hashable, Sendable {
    var scheme: String
    var host: String
    var port: Int
    /// The proxy connections to the origin go through: part of the connection pool's key, never
    /// set on an origin that credentials or cookies are bound to (``init(_:)`` leaves it `nil`).
    var proxy: HTTPProxy?

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether a lowercased scheme is one this loader speaks.
    static func isHTTP(scheme: String) -> Bool { scheme == "http" || scheme == "https" }

    /// The `Host` header: the port only when it is not the scheme's default, IPv6 in brackets.
    var hostHeader: String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port == (scheme == "https" ? 443 : 80) ? name : "\(name):\(port)"
    }
}

extension URL {
    /// What an HTTP/1.1 request line names: the path and query as written (still percent-encoded),
    /// `/` when the path is empty; `nil` when the URL has no authority.
    var requestTarget: String? {
        if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
            // The parsed components, without printing and rescanning the whole URL.
            let url = baseURL == nil ? self : absoluteURL
            guard url.host != nil else { return nil }
            let path = url.path(percentEncoded: true)
            let target = path.isEmpty ? "/" : path
            return url.query(percentEncoded: true).map { target + "?" + $0 } ?? target
        }
        let text = absoluteString
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let authority = text.index(colon, offsetBy: 3)
        let afterAuthority = text[authority...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" }
        guard let start = afterAuthority else { return "/" }
        var target = text[start...]
        if let fragment = target.firstIndex(of: "#") { target = target[..<fragment] }
        if target.isEmpty { return "/" }
        return target.first == "?" ? "/" + target : String(target)
    }
}
