#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The HTTP stack's entry point: a connection pool, the default headers and the limits every
/// load of it starts from. A load over it is an ``HTTPTransfer``; `HTTPImageLoader` (in WebImage)
/// owns one.
package final class HTTPSession: Sendable {
    /// How the session talks HTTP: every value is given (the library's defaults live with the loader).
    package typealias Configuration = HTTPClientSettings

    package let configuration: Configuration
    let pool: HTTPConnectionPool
    let defaultHeaders: DefaultRequestHeaders

    /// A session with a connection pool of its own; call ``shutdown()`` when done with it.
    package init(configuration: Configuration) {
        self.configuration = configuration
        defaultHeaders = DefaultRequestHeaders(configuration.defaultHeaders)
        pool = HTTPConnectionPool(maxConnectionsPerOrigin: configuration.maxConnectionsPerHost ?? Configuration.defaultMaxConnectionsPerHost,
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

    /// Connections opened and reused, and requests sent, by origin (`scheme://host[:port]`).
    package func connectionMetrics() -> [String: ConnectionCounts] {
        pool.metrics.snapshot()
    }

    /// Closes the pooled connections. Loads still running fail.
    package func shutdown() async {
        await pool.shutdown()
    }
}
