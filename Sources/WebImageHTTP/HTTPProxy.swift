#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageSupport

/// An HTTP proxy a connection goes through: plain http requests are forwarded by it (absolute-form
/// request target), https ones are tunnelled with `CONNECT`.
///
/// Part of a pooled connection's key (``HTTPOrigin/proxy``): connections through different
/// proxies, or with different proxy credentials, are never shared.
package struct HTTPProxy: Hashable, Sendable {
    /// The proxy's host, lowercased (IPv6 without brackets).
    package var host: String
    package var port: Int
    /// The `Proxy-Authorization` value (Basic) made from the proxy URL's user and password, if it has them.
    package var authorization: String?

    /// curl's default proxy port, for a proxy URL without one.
    package static let defaultPort = 1080

    /// The proxy named by `text`: `http://[user:password@]host[:port]`, the scheme optional (as in
    /// `HTTPS_PROXY=proxy:3128`). Other schemes (https, socks) are not spoken: they are refused with
    /// ``HTTPLoadError/invalidRequest(_:)`` rather than ignored, so traffic meant for a proxy never goes direct.
    package init(parsing text: String) throws(HTTPLoadError) {
        let trimmed = text.trimmingSpacesAndTabs
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(),
              let host = url.host, !host.isEmpty else {
            throw .invalidRequest("the proxy \(Self.redacted(trimmed)) is not a URL")
        }
        guard scheme == "http" else {
            throw .invalidRequest("the proxy \(Self.redacted(trimmed)) uses \(scheme)://; only http:// proxies are supported")
        }
        let port = url.port ?? Self.defaultPort
        guard (1...65535).contains(port) else { throw .invalidRequest("the proxy port \(port) is out of range") }
        self.host = host.lowercased()
        self.port = port
        if let user = Self.decodedUser(of: url) {
            let password = Self.decodedPassword(of: url) ?? ""
            authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }

    package init(host: String, port: Int, authorization: String? = nil) {
        self.host = host.lowercased()
        self.port = port
        self.authorization = authorization
    }

    /// `host:port`, for messages: never the credentials.
    package var displayName: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func decodedUser(of url: URL) -> String? {
        if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) { return url.user(percentEncoded: false) }
        return url.user
    }

    private static func decodedPassword(of url: URL) -> String? {
        if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) { return url.password(percentEncoded: false) }
        return url.password
    }

    /// `text` with any user information cut out, for error messages.
    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let prefix = text[..<at]
        // Keep the scheme: "socks5://…@host".
        let schemeEnd = prefix.firstIndex(of: "/").flatMap { slash in prefix[slash...].hasPrefix("//") ? prefix.index(slash, offsetBy: 2) : nil }
        return String(text[..<(schemeEnd ?? text.startIndex)]) + "…" + String(text[at...])
    }
}
