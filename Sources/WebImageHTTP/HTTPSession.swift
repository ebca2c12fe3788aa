#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The HTTP stack's entry point: a connection pool, the default headers and the limits every
/// load of it starts from. `HTTPImageLoader` (in WebImage) is a thin adapter over one.
package final class HTTPSession: Sendable {
    /// How the session talks HTTP: every value is given (the library's defaults live with the loader).
    package struct Configuration: Sendable {
        /// Fail when no bytes arrive for this long; a request's own timeout wins. Bounds connecting too.
        package var idleTimeout: Duration
        /// Fail when a load has not completed this long after it started.
        package var resourceTimeout: Duration
        /// How long opening a connection may take, TCP and TLS together.
        package var connectTimeout: Duration
        /// The largest body accepted.
        package var maxBodySize: Int64
        /// How many redirects to follow.
        package var maxRedirects: Int
        /// Headers sent with every request (a request's own headers win).
        package var defaultHeaders: [String: String]
        /// Skip TLS certificate validation (test servers only).
        package var allowsInvalidCertificates: Bool
        /// Certificates to trust besides the system's roots, in PEM.
        package var trustedCertificatesPEM: [String]
        /// A directory of hashed CA certificates (OpenSSL's layout) the system's roots are read
        /// from lazily; `nil`, or a directory without that layout, reads NIOSSL's default bundle
        /// whole (see ``SystemTrustRoots``). Linux only: Apple platforms ask the system's trust store.
        package var systemTrustDirectory: String? = SystemTrustRoots.defaultDirectory
        /// Follow redirects from https to plain http.
        package var allowsInsecureRedirects: Bool
        /// Sees every redirect's target before it is followed.
        package var redirectPolicy: HTTPRedirectPolicy?
        /// Connections kept per scheme, host and port.
        package var maxConnectionsPerHost: Int
        /// Sees every address a new connection would go to, after name resolution (see ``ConnectAddressPolicy``).
        package var addressPolicy: ConnectAddressPolicy?
        /// Public-key pins and a trust hook for https servers (see ``ServerTrust``).
        package var serverTrust: ServerTrust?
        /// The certificate sent to servers that ask for one (mutual TLS).
        package var clientCertificate: ClientCertificate?
        /// How long a pooled connection may sit idle before it is closed.
        package var idleConnectionTimeout: Duration = .seconds(60)
        /// Resolves host names instead of getaddrinfo (tests give names the addresses they need).
        package var nameResolver: NameResolver?
        /// Told every connection opened or reused and every request, with its origin (metrics export).
        package var connectionObserver: ConnectionEventObserver?
        /// The proxies requests go through (``HTTPProxySettings/direct``: none).
        package var proxy: HTTPProxySettings = .direct
        /// Which HTTP versions to speak (``HTTPVersionPreference/auto``: h2 when a TLS server offers it).
        /// HTTP/2 goes through a proxy's `CONNECT` tunnel too (ALPN runs end to end); plain http
        /// through a forwarding proxy is always HTTP/1.1.
        package var httpVersion: HTTPVersionPreference = .auto

        package init(idleTimeout: Duration, resourceTimeout: Duration, connectTimeout: Duration, maxBodySize: Int64,
                     maxRedirects: Int, defaultHeaders: [String: String], allowsInvalidCertificates: Bool,
                     trustedCertificatesPEM: [String], allowsInsecureRedirects: Bool,
                     redirectPolicy: HTTPRedirectPolicy?, maxConnectionsPerHost: Int,
                     addressPolicy: ConnectAddressPolicy? = nil) {
            self.addressPolicy = addressPolicy
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
    }

    package let configuration: Configuration
    let pool: HTTPConnectionPool
    let defaultHeaders: DefaultRequestHeaders

    /// A session with a connection pool of its own; call ``shutdown()`` when done with it.
    package init(configuration: Configuration) {
        self.configuration = configuration
        defaultHeaders = DefaultRequestHeaders(configuration.defaultHeaders)
        pool = HTTPConnectionPool(maxConnectionsPerOrigin: configuration.maxConnectionsPerHost,
                                  allowsInvalidCertificates: configuration.allowsInvalidCertificates,
                                  trustedCertificatesPEM: configuration.trustedCertificatesPEM,
                                  systemTrustDirectory: configuration.systemTrustDirectory,
                                  idleConnectionTimeout: RequestValidation.clamped(configuration.idleConnectionTimeout),
                                  addressPolicy: configuration.addressPolicy,
                                  serverTrust: configuration.serverTrust,
                                  clientCertificate: configuration.clientCertificate,
                                  nameResolver: configuration.nameResolver,
                                  connectionObserver: configuration.connectionObserver,
                                  httpVersion: configuration.httpVersion)
    }

    /// Whether `url` is http or https.
    package func canLoad(_ url: URL) -> Bool {
        HTTPOrigin.isHTTP(scheme: url.scheme?.lowercased() ?? "")
    }

    /// A load of `request` that hands each event to `sink` as it happens, on the connection's
    /// event loop; an error thrown by `sink` ends the load with ``HTTPLoadError/consumer(_:)``.
    /// Call ``HTTPTransfer/start(_:)`` to run it.
    package func makeTransfer(_ request: HTTPLoadRequest, hooks: HTTPLoadHooks = HTTPLoadHooks(),
                              sink: @escaping @Sendable (HTTPLoadEvent) throws -> Void) -> HTTPTransfer {
        HTTPTransfer(request, hooks: hooks, configuration: configuration, defaultHeaders: defaultHeaders, pool: pool, sink: sink)
    }

    /// Connections opened and reused, and requests sent, by origin (`scheme://host[:port]`).
    package func connectionMetrics() -> [String: ConnectionCounts] {
        pool.metrics.snapshot()
    }

    /// Closes the pooled connections. Loads still running fail.
    package func shutdown() async {
        await pool.shutdown()
    }
}
