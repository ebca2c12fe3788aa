#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

/// Loads http and https URLs over pooled keep-alive HTTP/1.1 connections or multiplexed HTTP/2
/// connections (SwiftNIO, NIOSSL for https, NIOHTTP2), streaming the body.
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
        public var redirectPolicy: ImageDownloader.RedirectPolicy?
        /// Connections kept per host in the pool.
        public var maxConnectionsPerHost: Int
        /// Sees every address a new connection would go to, after resolution; see ``ConnectAddressPolicy``.
        public var connectAddressPolicy: ImageDownloader.ConnectAddressPolicy?
        /// Public-key pins and a trust hook for https servers; see ``ImageDownloader/ServerTrust``.
        public var serverTrust: ImageDownloader.ServerTrust?
        /// The certificate sent to https servers that ask for one (mutual TLS).
        public var clientCertificate: ImageDownloader.ClientCertificate?
        /// How long a pooled connection may sit idle before it is closed (60 s by default).
        public var idleConnectionTimeout: Duration = .seconds(60)
        /// The proxies requests go through; by default the environment's (`http_proxy`,
        /// `https_proxy`, `no_proxy`), read when the configuration is made.
        public var proxy: ImageDownloader.ProxySettings
        /// Which HTTP versions to speak; the default, ``ImageDownloader/HTTPVersion/auto``, takes
        /// HTTP/2 when an https server offers it (one connection per origin carrying every load as
        /// a stream) and HTTP/1.1 otherwise.
        public var httpVersion: ImageDownloader.HTTPVersion = .auto

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
                    redirectPolicy: ImageDownloader.RedirectPolicy? = nil,
                    connectAddressPolicy: ImageDownloader.ConnectAddressPolicy? = nil,
                    proxy: ImageDownloader.ProxySettings = .environment()) {
            self.proxy = proxy
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
    /// The HTTP stack (the WebImageHTTP module) this loader adapts.
    let session: HTTPSession

    /// Creates a loader with its own connection pool; call ``shutdown()`` when done with it.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var http = HTTPSession.Configuration(
            idleTimeout: configuration.idleTimeout, resourceTimeout: configuration.resourceTimeout,
            connectTimeout: configuration.connectTimeout, maxBodySize: configuration.maxBodySize,
            maxRedirects: configuration.maxRedirects, defaultHeaders: configuration.defaultHeaders,
            allowsInvalidCertificates: configuration.allowsInvalidCertificates,
            trustedCertificatesPEM: configuration.trustedCertificatesPEM,
            allowsInsecureRedirects: configuration.allowsInsecureRedirects,
            redirectPolicy: configuration.redirectPolicy, maxConnectionsPerHost: configuration.maxConnectionsPerHost,
            addressPolicy: configuration.connectAddressPolicy)
        http.serverTrust = configuration.serverTrust?.http
        http.clientCertificate = configuration.clientCertificate?.http
        http.idleConnectionTimeout = configuration.idleConnectionTimeout
        http.connectionObserver = ImageDownloader.ConnectionMetrics.export
        http.proxy = configuration.proxy.httpSettings
        http.httpVersion = configuration.httpVersion.http
        session = HTTPSession(configuration: http)
    }

    /// How this loader's connections were used, by origin (`scheme://host[:port]`, the port only
    /// when it is not the scheme's default), since the loader was made; past 256 origins, new ones
    /// are counted together under `"other"`.
    public func connectionMetrics() -> [String: ImageDownloader.ConnectionMetrics] {
        session.connectionMetrics().mapValues { ImageDownloader.ConnectionMetrics($0) }
    }

    /// Closes the pooled connections. Loads still running fail.
    public func shutdown() async throws {
        await session.shutdown()
    }

    /// Whether `url` is http or https.
    public func canLoad(_ url: URL) -> Bool {
        session.canLoad(url)
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
    /// event loop; an error thrown by `sink` aborts the load with that error. The downloader uses
    /// this directly, without a stream in between. Call ``HTTPImageTransfer/start(_:)`` to run it.
    func makeTransfer(_ request: ImageLoadRequest, method: HTTPRequestMethod = .get, body: Data? = nil, hooks: HTTPLoadHooks,
                      sink: @escaping @Sendable (ImageLoadEvent) throws -> Void) -> HTTPImageTransfer {
        let validators = request.validators.map { HTTPLoadRequest.Validators(etag: $0.etag, lastModified: $0.lastModified) }
        var http = HTTPLoadRequest(url: request.url, headers: request.headers, timeout: request.timeout,
                                   resourceTimeout: request.resourceTimeout, validators: validators,
                                   wantsPartialData: request.wantsPartialData, priority: request.priority.rawValue)
        http.method = method
        http.body = body
        return HTTPImageTransfer(transfer: session.makeTransfer(http, hooks: hooks) { event in try sink(ImageLoadEvent(event)) })
    }
}

/// One HTTP load as the downloader drives it: the HTTP stack's transfer, with its errors as ``WebImageError``.
struct HTTPImageTransfer: Sendable {
    let transfer: HTTPTransfer

    /// Starts the load; `completion` is called once, on whichever thread ends it.
    func start(_ completion: @escaping @Sendable (Result<Void, WebImageError>) -> Void) {
        transfer.start { result in completion(result.mapError(WebImageError.init)) }
    }

    /// Ends the load with ``WebImageError/cancelled``; safe from any thread, more than once.
    func cancel() {
        transfer.cancel()
    }
}

extension ImageLoadEvent {
    /// The HTTP stack's event as a loader event.
    init(_ event: HTTPLoadEvent) {
        switch event {
        case .response(let response): self = .response(ImageLoadResponse(response))
        case .progress(let received, let expected): self = .progress(received: received, expected: expected)
        case .partialData(let data): self = .partialData(data)
        case .completed(let data, let response): self = .completed(data, ImageLoadResponse(response))
        case .notModified(let response): self = .notModified(ImageLoadResponse(response))
        }
    }
}

extension ImageLoadResponse {
    init(_ response: HTTPLoadResponse) {
        self.init(url: response.url, statusCode: response.statusCode, headers: response.headers,
                  expectedContentLength: response.expectedContentLength)
    }
}
