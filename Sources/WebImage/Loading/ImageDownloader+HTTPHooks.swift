#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

extension ImageDownloader {
    /// What every HTTP load of a downloader with `configuration` is given: its default headers,
    /// limits, redirect rules, proxy and retry policy, and the same-origin credentials and
    /// cookies of `cookies`.
    static func makeHTTPHooks(_ configuration: ImageDownloaderConfiguration, cookies: CookieJar) -> HTTPLoadHooks {
        let storeCookies: (@Sendable (URL, [String]) -> Void)?
        if configuration.cookiesEnabled {
            storeCookies = { url, values in cookies.store(setCookies: values, from: url) }
        } else {
            storeCookies = nil
        }
        return HTTPLoadHooks(
            settings: configuration.http,
            sameOriginHeaders: { url in
                // Most downloaders hold no credentials and (so far) no cookies.
                guard !configuration.credentials.isEmpty || (configuration.cookiesEnabled && !cookies.isEmpty) else { return [:] }
                var headers: [String: String] = [:]
                // Basic auth is the password in clear (base64): only over TLS unless opted in.
                if configuration.allowsCredentialsOverHTTP || url.scheme?.lowercased() == "https",
                   let credential = configuration.credentials[url.host?.lowercased() ?? ""] {
                    headers["Authorization"] = credential.authorizationHeader
                }
                if configuration.cookiesEnabled, let cookie = cookies.header(for: url) { headers["Cookie"] = cookie }
                return headers
            },
            didReceiveCookies: storeCookies)
    }
}
