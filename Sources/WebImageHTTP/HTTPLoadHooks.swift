#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-load settings and per-hop callbacks the downloader gives the HTTP loader.
package struct HTTPLoadHooks: Sendable {
    /// The settings this load follows instead of the session's (a downloader's, on a pool it may
    /// share): its timeouts, limits, redirects, default headers, proxy and retries. The settings
    /// of the pool (trust, connection limits, HTTP version) stay the session's.
    package let settings: HTTPClientSettings?
    /// ``settings``' default headers, checked once rather than on every load.
    package let defaultHeaders: DefaultRequestHeaders?
    /// Headers (credentials, cookies) added only to hops on the original origin.
    package var sameOriginHeaders: @Sendable (URL) -> [String: String] = { _ in [:] }
    /// Gets the `Set-Cookie` values of every response that has any (for the cookie jar).
    package var didReceiveCookies: (@Sendable (URL, [String]) -> Void)?

    package init(settings: HTTPClientSettings? = nil,
                 sameOriginHeaders: @escaping @Sendable (URL) -> [String: String] = { _ in [:] },
                 didReceiveCookies: (@Sendable (URL, [String]) -> Void)? = nil) {
        self.settings = settings
        defaultHeaders = settings.map { DefaultRequestHeaders($0.defaultHeaders) }
        self.sameOriginHeaders = sameOriginHeaders
        self.didReceiveCookies = didReceiveCookies
    }
}
