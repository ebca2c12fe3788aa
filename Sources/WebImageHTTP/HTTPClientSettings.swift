#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How HTTP loads are made: limits, timeouts, redirects, TLS trust, the connection pool, proxies,
/// HTTP versions and retries. The one declaration of these settings: WebImage's
/// `HTTPImageLoader.Configuration` is this type, and `ImageDownloaderConfiguration` holds one
/// (its `http` property) whose settings read as its own (`configuration.maxBodySize`).
///
/// Two kinds of settings live here. Those of a load (timeouts, limits, redirects, default
/// headers, proxy, retries) apply to each load and may differ between downloaders that share a
/// connection pool. Those of the pool (TLS trust, client certificate, address policy, connection
/// limits, HTTP version) are fixed when the pool is made: a downloader that sets one of them gets
/// a pool of its own.
public struct HTTPClientSettings: Sendable {
    /// Fail when no bytes arrive for this long (restarts on every chunk); a request's own timeout
    /// wins. It bounds opening a connection too, when shorter than ``connectTimeout``.
    public var idleTimeout: Duration
    /// Fail when a load has not completed this long after it started, however steadily the bytes
    /// trickle in; a request's own resource timeout wins.
    public var resourceTimeout: Duration
    /// How long opening a connection may take, TCP and TLS handshake together (a host that
    /// accepts the connection and never finishes the handshake fails the load as timed out).
    public var connectTimeout: Duration
    /// The largest body accepted; a larger one fails the load as too large.
    public var maxBodySize: Int64
    /// How many redirects are followed before the load fails.
    public var maxRedirects: Int
    /// Headers sent with every request (a request's own headers win). Sent on every redirect hop,
    /// unlike a request's own headers, which never leave the original origin.
    public var defaultHeaders: [String: String]
    /// Skip TLS certificate validation. Only for test servers with self-signed certificates.
    public var allowsInvalidCertificates: Bool
    /// Extra certificates to trust besides the system's roots, in PEM: a private CA, or a
    /// server's self-signed certificate. Unreadable PEM fails https loads as an invalid request.
    public var trustedCertificatesPEM: [String]
    /// A directory of hashed CA certificates (OpenSSL's layout) the system's roots are read
    /// from lazily; `nil`, or a directory without that layout, reads NIOSSL's default bundle
    /// whole (see ``SystemTrustRoots``). Linux only: Apple platforms ask the system's trust store.
    package var systemTrustDirectory: String? = SystemTrustRoots.defaultDirectory
    /// Follow redirects from https to plain http. Off by default: on plain http a network attacker
    /// can answer in the server's name, and the answer would be cached under the https URL.
    public var allowsInsecureRedirects: Bool
    /// Sees every redirect's target before it is followed; `false` fails the load as rejected
    /// (block private addresses, foreign hosts...).
    public var redirectPolicy: HTTPRedirectPolicy?
    /// Connections kept open per scheme, host and port. `nil` leaves it to whoever makes the pool:
    /// 8 for a session (WebImage's `HTTPImageLoader`); for a
    /// WebImage `ImageDownloader` (whose settings leave it `nil`), the shared pool's, or one per
    /// concurrent download in a pool of its own, which setting it gives the downloader.
    public var maxConnectionsPerHost: Int?
    /// The connections per host of a session whose settings leave ``maxConnectionsPerHost`` unset.
    package static let defaultMaxConnectionsPerHost = 8
    /// Sees every address a new connection would go to, after name resolution, and may refuse it
    /// (an SSRF guard); see ``ConnectAddressPolicy``.
    public var connectAddressPolicy: ConnectAddressPolicy?
    /// Public-key pins and a trust hook for https servers (see ``ServerTrust``).
    public var serverTrust: ServerTrust?
    /// The certificate sent to https servers that ask for one (mutual TLS).
    public var clientCertificate: ClientCertificate?
    /// How long a pooled connection may sit idle before it is closed.
    public var idleConnectionTimeout: Duration = .seconds(60)
    /// Resolves host names instead of getaddrinfo (tests give names the addresses they need).
    package var nameResolver: NameResolver?
    /// Told every connection opened or reused and every request, with its origin (metrics export).
    package var connectionObserver: ConnectionEventObserver?
    /// The proxies requests go through (``HTTPProxySettings/direct``: none).
    public var proxy: HTTPProxySettings = .direct
    /// Which HTTP versions to speak: ``HTTPVersionPreference/auto`` takes HTTP/2 when an https
    /// server offers it by ALPN (one connection per origin carrying every load as a stream), else
    /// HTTP/1.1. HTTP/2 goes through a proxy's `CONNECT` tunnel too (ALPN runs end to end); plain
    /// http through a forwarding proxy is always HTTP/1.1.
    public var httpVersion: HTTPVersionPreference = .auto
    /// Sends loads that failed transiently again; `nil` (the default): never. See ``HTTPRetryPolicy``.
    public var retryPolicy: HTTPRetryPolicy?

    /// Settings with every value given (the library's defaults live with the image loader).
    package init(idleTimeout: Duration, resourceTimeout: Duration, connectTimeout: Duration, maxBodySize: Int64,
                 maxRedirects: Int, defaultHeaders: [String: String], allowsInvalidCertificates: Bool,
                 trustedCertificatesPEM: [String], allowsInsecureRedirects: Bool,
                 redirectPolicy: HTTPRedirectPolicy?, maxConnectionsPerHost: Int?,
                 addressPolicy: ConnectAddressPolicy? = nil) {
        self.connectAddressPolicy = addressPolicy
        self.idleTimeout = idleTimeout
        self.resourceTimeout = resourceTimeout
        self.connectTimeout = connectTimeout
        self.maxBodySize = maxBodySize
        self.maxRedirects = maxRedirects
        self.defaultHeaders = defaultHeaders
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.trustedCertificatesPEM = trustedCertificatesPEM
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.redirectPolicy = redirectPolicy
        self.maxConnectionsPerHost = maxConnectionsPerHost
    }

    /// The HTTP stack's name for ``connectAddressPolicy``.
    package var addressPolicy: ConnectAddressPolicy? {
        get { connectAddressPolicy }
        set { connectAddressPolicy = newValue }
    }

    /// Whether a pool made with these settings would be made as one made with `other`: the
    /// settings of the pool (not of each load) agree. A policy or hook agrees only when both are
    /// unset (closures cannot be compared). Reads every setting ``HTTPSession`` gives its pool.
    package func hasSamePoolSettings(as other: HTTPClientSettings) -> Bool {
        maxConnectionsPerHost == other.maxConnectionsPerHost && allowsInvalidCertificates == other.allowsInvalidCertificates
            && trustedCertificatesPEM == other.trustedCertificatesPEM && systemTrustDirectory == other.systemTrustDirectory
            && idleConnectionTimeout == other.idleConnectionTimeout && httpVersion == other.httpVersion
            && connectAddressPolicy == nil && other.connectAddressPolicy == nil
            && serverTrust == nil && other.serverTrust == nil && clientCertificate == nil && other.clientCertificate == nil
            && nameResolver == nil && other.nameResolver == nil
    }
}
