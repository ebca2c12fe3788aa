#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

extension ImageDownloader {
    /// Which HTTP proxy requests go through, written as curl's `http_proxy`, `https_proxy` and
    /// `no_proxy` are. By default (``environment(_:)``) they are read from the process's
    /// environment when the configuration is made.
    ///
    /// A proxy is `http://[user:password@]host[:port]` (the scheme may be left out; the port
    /// defaults to 1080, as in curl). Plain http requests are forwarded by it; https requests go
    /// through a `CONNECT` tunnel, with TLS to the server end to end. The user and password, if
    /// given, are sent to the proxy as Basic `Proxy-Authorization`, never to the server. A proxy
    /// that answers 407 fails the load with ``WebImageError/proxyAuthenticationRequired(_:)``
    /// (permanent); a proxy URL that is not usable (another scheme than http, not a URL) fails
    /// every load that would use it with ``WebImageError/invalidRequest(_:)``, never sending it direct.
    ///
    /// ``noProxy`` lists the hosts that go direct, matched as curl does: comma-separated,
    /// case-insensitive; `*` alone means every host; `example.com` (or `.example.com`) matches
    /// that host and every name under it; an IP address matches itself, `10.0.0.0/8` a range;
    /// `host:port` matches that port only. As in curl, loopback hosts (`localhost`, `127.0.0.1`)
    /// go through the proxy unless they are listed.
    ///
    /// With a ``ImageDownloaderConfiguration/connectAddressPolicy``, the server's name is resolved
    /// and checked here before the request goes to the proxy, so a refused name is never sent.
    /// The proxy resolves the name again itself and could get another answer: where that matters,
    /// the proxy should enforce the same rule.
    public struct ProxySettings: Sendable, Hashable {
        /// The proxy of http URLs, `nil` for none.
        public var httpProxy: String?
        /// The proxy of https URLs, `nil` for none.
        public var httpsProxy: String?
        /// The hosts that bypass the proxies (see above), `nil` for none.
        public var noProxy: String?

        /// Settings with these proxies (`nil`: that scheme goes direct).
        public init(httpProxy: String? = nil, httpsProxy: String? = nil, noProxy: String? = nil) {
            self.httpProxy = httpProxy
            self.httpsProxy = httpsProxy
            self.noProxy = noProxy
        }

        /// One proxy for http and https URLs.
        public init(proxy: String, noProxy: String? = nil) {
            self.init(httpProxy: proxy, httpsProxy: proxy, noProxy: noProxy)
        }

        /// No proxy: every request goes straight to its server.
        public static let direct = ProxySettings()

        /// The settings of `environment`: `http_proxy`, `https_proxy` and `no_proxy`, each in lower
        /// or upper case (lower case wins when both are set). An empty variable counts as unset.
        public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxySettings {
            func value(_ name: String) -> String? {
                [environment[name], environment[name.uppercased()]].lazy.compactMap { $0 }.first { !$0.trimmingSpacesAndTabs.isEmpty }
            }
            return ProxySettings(httpProxy: value("http_proxy"), httpsProxy: value("https_proxy"), noProxy: value("no_proxy"))
        }

        /// Throws ``WebImageError/invalidRequest(_:)`` when a proxy is set that loads could not use
        /// (another scheme than http, not a URL): those loads would fail with it.
        public func validate() throws(WebImageError) {
            for text in [httpProxy, httpsProxy] {
                guard let text, !text.trimmingSpacesAndTabs.isEmpty else { continue }
                do {
                    _ = try HTTPProxy(parsing: text)
                } catch {
                    throw WebImageError(error)
                }
            }
        }

        /// The HTTP stack's form, parsed once.
        var httpSettings: HTTPProxySettings {
            HTTPProxySettings(httpProxy: httpProxy, httpsProxy: httpsProxy, noProxy: noProxy)
        }
    }
}
