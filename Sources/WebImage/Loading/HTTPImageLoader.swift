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
/// ``/WebImageHTTP/HTTPClientSettings/maxRedirects``), not by the client, so that no header the caller set (credentials,
/// cookies, API keys, conditional headers) reaches another origin: a hop to another origin sends
/// the default headers only. A redirect from https to plain http is refused unless
/// ``/WebImageHTTP/HTTPClientSettings/allowsInsecureRedirects``; ``/WebImageHTTP/HTTPClientSettings/redirectPolicy`` sees every hop first.
/// Header names and values are checked before anything is sent (``WebImageError/invalidRequest(_:)``),
/// and TLS is 1.2 at least.
public final class HTTPImageLoader: ImageLoader {
    /// How the loader talks HTTP: the HTTP stack's settings, declared once there (see
    /// ``/WebImageHTTP/HTTPClientSettings``); `Configuration()` starts from ``ImageLoaderDefaults``.
    @available(*, deprecated, renamed: "HTTPClientSettings")
    public typealias Configuration = HTTPClientSettings

    /// The process-wide loader with the default configuration; never shut down.
    public static let shared = HTTPImageLoader()

    /// The configuration the loader was made with.
    public let configuration: HTTPClientSettings
    /// The HTTP stack's session: its connection pool. The downloader runs its loads over it
    /// directly (``/WebImageHTTP/HTTPTransfer``), with its own hooks.
    let session: HTTPSession

    /// Creates a loader with its own connection pool; call ``shutdown()`` when done with it.
    public init(configuration: HTTPClientSettings = HTTPClientSettings()) {
        self.configuration = configuration
        var http = configuration
        http.connectionObserver = ConnectionCounts.export
        session = HTTPSession(configuration: http)
    }

    /// How this loader's connections were used, by origin (`scheme://host[:port]`, the port only
    /// when it is not the scheme's default), since the loader was made; past 256 origins, new ones
    /// are counted together under `"other"`.
    public func connectionMetrics() -> [String: ConnectionCounts] {
        session.connectionMetrics()
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
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let transfer = HTTPTransfer(request, session: session) { event in continuation.yield(event) }
        continuation.onTermination = { _ in transfer.cancel() }
        transfer.start { result in
            switch result {
            case .success: continuation.finish()
            case .failure(let error): continuation.finish(throwing: WebImageError(error))
            }
        }
        return stream
    }
}

extension HTTPClientSettings {
    /// Settings with the defaults of ``ImageLoaderDefaults``; the proxies are the environment's
    /// (`http_proxy`, `https_proxy`, `no_proxy`), read when the settings are made.
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
                redirectPolicy: HTTPRedirectPolicy? = nil,
                connectAddressPolicy: ConnectAddressPolicy? = nil,
                proxy: HTTPProxySettings = .environment()) {
        self.init(idleTimeout: idleTimeout, resourceTimeout: resourceTimeout, connectTimeout: connectTimeout,
                  maxBodySize: maxBodySize, maxRedirects: maxRedirects, defaultHeaders: defaultHeaders,
                  allowsInvalidCertificates: allowsInvalidCertificates, trustedCertificatesPEM: trustedCertificatesPEM,
                  allowsInsecureRedirects: allowsInsecureRedirects, redirectPolicy: redirectPolicy,
                  maxConnectionsPerHost: maxConnectionsPerHost, addressPolicy: connectAddressPolicy)
        self.proxy = proxy
    }
}
