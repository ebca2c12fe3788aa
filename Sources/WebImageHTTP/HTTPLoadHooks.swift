#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-load settings and per-hop callbacks the downloader gives the HTTP loader.
package struct HTTPLoadHooks: Sendable {
    /// Replaces the loader's default headers.
    package var defaultHeaders: DefaultRequestHeaders?
    /// Replaces the loader's body size limit.
    package var maxBodySize: Int64?
    /// Replaces the loader's redirect limit.
    package var maxRedirects: Int?
    /// Replaces the loader's resource timeout (a request's own still wins).
    package var resourceTimeout: Duration?
    /// Replaces whether redirects from https to http are followed.
    package var allowsInsecureRedirects: Bool?
    /// Replaces the loader's redirect policy.
    package var redirectPolicy: HTTPRedirectPolicy?
    /// Headers (credentials, cookies) added only to hops on the original origin.
    package var sameOriginHeaders: @Sendable (URL) -> [String: String] = { _ in [:] }
    /// Gets the `Set-Cookie` values of every response that has any (for the cookie jar).
    package var didReceiveCookies: (@Sendable (URL, [String]) -> Void)?
    /// Replaces the loader's proxy settings.
    package var proxy: HTTPProxySettings?
    /// Sends a load that failed transiently again (see ``HTTPRetryPolicy``); `nil`: never.
    package var retryPolicy: HTTPRetryPolicy?

    package init(defaultHeaders: DefaultRequestHeaders? = nil, maxBodySize: Int64? = nil, maxRedirects: Int? = nil,
                 resourceTimeout: Duration? = nil, allowsInsecureRedirects: Bool? = nil,
                 redirectPolicy: HTTPRedirectPolicy? = nil,
                 sameOriginHeaders: @escaping @Sendable (URL) -> [String: String] = { _ in [:] },
                 didReceiveCookies: (@Sendable (URL, [String]) -> Void)? = nil) {
        self.defaultHeaders = defaultHeaders
        self.maxBodySize = maxBodySize
        self.maxRedirects = maxRedirects
        self.resourceTimeout = resourceTimeout
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.redirectPolicy = redirectPolicy
        self.sameOriginHeaders = sameOriginHeaders
        self.didReceiveCookies = didReceiveCookies
    }
}
