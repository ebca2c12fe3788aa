#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1

/// Loads http and https URLs over pooled keep-alive HTTP/1.1 connections (SwiftNIO, with
/// NIOSSL for https), streaming the body.
///
/// Each loader has its own connection pool; ``shared`` lives for the process, other loaders
/// must be ended with ``shutdown()``. Redirects are followed here (at most
/// ``Configuration/maxRedirects``), not by the client, so that no header the caller set (credentials,
/// cookies, API keys, conditional headers) reaches another origin: a hop to another origin sends
/// the default headers only. A redirect from https to plain http is refused unless
/// ``Configuration/allowsInsecureRedirects``; ``Configuration/redirectPolicy`` sees every hop first.
/// Header names and values are checked before anything is sent (``WebImageError/invalidRequest(_:)``),
/// and TLS is 1.2 at least.
public final class HTTPImageLoader: ImageLoader {
    /// How the loader talks HTTP.
    public struct Configuration: Sendable {
        /// Fail when no bytes arrive for this long (restarts on every chunk); a request's own timeout wins.
        /// It bounds opening a connection too, when shorter than ``connectTimeout``.
        public var idleTimeout: Duration
        /// Fail when a load has not completed this long after it started, however steadily the bytes
        /// trickle in; a request's own ``ImageLoadRequest/resourceTimeout`` wins.
        public var resourceTimeout: Duration
        /// How long opening a connection may take, TCP and TLS handshake together (a host that
        /// accepts the connection and never finishes the handshake fails with ``WebImageError/timedOut``).
        public var connectTimeout: Duration
        /// The largest body accepted; larger ones fail with ``WebImageError/tooLarge(_:)``.
        public var maxBodySize: Int64
        /// How many redirects to follow.
        public var maxRedirects: Int
        /// Headers sent with every request (a request's own headers win).
        public var defaultHeaders: [String: String]
        /// Skip TLS certificate validation. Only for test servers with self-signed certificates.
        public var allowsInvalidCertificates: Bool
        /// Extra certificates to trust besides the system's roots, in PEM: a private CA, or a
        /// server's self-signed certificate. Unreadable PEM fails https loads with ``WebImageError/invalidRequest(_:)``.
        public var trustedCertificatesPEM: [String]
        /// Follow redirects from https to plain http. Off by default: on plain http a network attacker
        /// can answer in the server's name, and the answer would be cached under the https URL.
        public var allowsInsecureRedirects: Bool
        /// Sees every redirect's target before it is followed; `false` fails the load with
        /// ``WebImageError/rejected(_:)`` (block private addresses, foreign hosts...).
        public var redirectPolicy: DownloadRedirectPolicy?
        /// Connections kept per host in the pool.
        public var maxConnectionsPerHost: Int
        /// Sees every address a new connection would go to, after resolution; see ``ConnectAddressPolicy``.
        public var connectAddressPolicy: ConnectAddressPolicy?

        /// Creates a configuration with the defaults of ``ImageLoaderDefaults``.
        public init(idleTimeout: Duration = ImageLoaderDefaults.idleTimeout,
                    maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize,
                    maxRedirects: Int = ImageLoaderDefaults.maxRedirects,
                    defaultHeaders: [String: String] = ImageLoaderDefaults.headers,
                    allowsInvalidCertificates: Bool = false,
                    maxConnectionsPerHost: Int = 8,
                    resourceTimeout: Duration = ImageLoaderDefaults.resourceTimeout,
                    connectTimeout: Duration = ImageLoaderDefaults.connectTimeout,
                    trustedCertificatesPEM: [String] = [],
                    allowsInsecureRedirects: Bool = false,
                    redirectPolicy: DownloadRedirectPolicy? = nil,
                    connectAddressPolicy: ConnectAddressPolicy? = nil) {
            self.connectAddressPolicy = connectAddressPolicy
            self.idleTimeout = idleTimeout
            self.resourceTimeout = resourceTimeout
            self.connectTimeout = connectTimeout
            self.trustedCertificatesPEM = trustedCertificatesPEM
            self.allowsInsecureRedirects = allowsInsecureRedirects
            self.redirectPolicy = redirectPolicy
            self.maxBodySize = maxBodySize
            self.maxRedirects = maxRedirects
            self.defaultHeaders = defaultHeaders
            self.allowsInvalidCertificates = allowsInvalidCertificates
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    /// The process-wide loader with the default configuration; never shut down.
    public static let shared = HTTPImageLoader()

    /// The configuration the loader was made with.
    public let configuration: Configuration
    let pool: HTTPConnectionPool
    let defaultHeaders: DefaultRequestHeaders

    /// Creates a loader with its own connection pool; call ``shutdown()`` when done with it.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        defaultHeaders = DefaultRequestHeaders(configuration.defaultHeaders)
        self.pool = HTTPConnectionPool(maxConnectionsPerOrigin: configuration.maxConnectionsPerHost,
                                       allowsInvalidCertificates: configuration.allowsInvalidCertificates,
                                       trustedCertificatesPEM: configuration.trustedCertificatesPEM,
                                       addressPolicy: configuration.connectAddressPolicy)
    }

    /// Closes the pooled connections. Loads still running fail.
    public func shutdown() async throws {
        await pool.shutdown()
    }

    /// Whether `url` is http or https.
    public func canLoad(_ url: URL) -> Bool {
        HTTPOrigin.isHTTP(scheme: url.scheme?.lowercased() ?? "")
    }

    /// Starts loading; terminating the stream cancels the request.
    public func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        load(request, hooks: HTTPLoadHooks())
    }

    /// Starts loading with the downloader's per-hop hooks.
    func load(_ request: ImageLoadRequest, hooks: HTTPLoadHooks) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let transfer = makeTransfer(request, hooks: hooks) { event in continuation.yield(event) }
        continuation.onTermination = { _ in transfer.cancel() }
        transfer.start { result in
            switch result {
            case .success: continuation.finish()
            case .failure(let error): continuation.finish(throwing: error)
            }
        }
        return stream
    }

    /// A load of `request` that hands each event to `sink` as it happens, on the connection's
    /// event loop; an error thrown by `sink` aborts the load. The downloader uses this directly,
    /// without a stream in between. Call ``HTTPTransfer/start(_:)`` to run it.
    func makeTransfer(_ request: ImageLoadRequest, hooks: HTTPLoadHooks,
                      sink: @escaping @Sendable (ImageLoadEvent) throws -> Void) -> HTTPTransfer {
        HTTPTransfer(request, hooks: hooks, configuration: configuration, defaultHeaders: defaultHeaders, pool: pool, sink: sink)
    }
}

/// Per-load settings and per-hop callbacks the downloader gives the HTTP loader.
struct HTTPLoadHooks: Sendable {
    /// Replaces the loader's default headers.
    var defaultHeaders: DefaultRequestHeaders?
    /// Replaces the loader's body size limit.
    var maxBodySize: Int64?
    /// Replaces the loader's redirect limit.
    var maxRedirects: Int?
    /// Replaces the loader's resource timeout (a request's own still wins).
    var resourceTimeout: Duration?
    /// Replaces whether redirects from https to http are followed.
    var allowsInsecureRedirects: Bool?
    /// Replaces the loader's redirect policy.
    var redirectPolicy: DownloadRedirectPolicy?
    /// Headers (credentials, cookies) added only to hops on the original origin.
    var sameOriginHeaders: @Sendable (URL) -> [String: String] = { _ in [:] }
    /// Gets the `Set-Cookie` values of every response that has any (for the cookie jar).
    var didReceiveCookies: (@Sendable (URL, [String]) -> Void)?
}

/// Scheme, host and port: the unit credentials and cookies are bound to.
struct HTTPOrigin: Hashable, Sendable {
    var scheme: String
    var host: String
    var port: Int

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
