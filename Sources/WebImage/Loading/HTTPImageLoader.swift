import Foundation
import NIOCore
import NIOHTTP1

/// Loads http and https URLs over pooled keep-alive HTTP/1.1 connections (SwiftNIO, with
/// NIOSSL for https), streaming the body.
///
/// Each loader has its own connection pool; ``shared`` lives for the process, other loaders
/// must be ended with ``shutdown()``. Redirects are followed here (at most
/// ``Configuration/maxRedirects``), not by the client, so that `Authorization`, `Cookie` and the
/// origin-bound headers of the downloader never reach another origin.
public final class HTTPImageLoader: ImageLoader {
    /// How the loader talks HTTP.
    public struct Configuration: Sendable {
        /// Fail when no bytes arrive for this long (restarts on every chunk); a request's own timeout wins.
        public var idleTimeout: Duration
        /// The largest body accepted; larger ones fail with ``WebImageError/tooLarge(_:)``.
        public var maxBodySize: Int64
        /// How many redirects to follow.
        public var maxRedirects: Int
        /// Headers sent with every request (a request's own headers win).
        public var defaultHeaders: [String: String]
        /// Skip TLS certificate validation. Only for test servers with self-signed certificates.
        public var allowsInvalidCertificates: Bool
        /// Connections kept per host in the pool.
        public var maxConnectionsPerHost: Int

        /// Creates a configuration with the defaults of ``ImageLoaderDefaults``.
        public init(idleTimeout: Duration = ImageLoaderDefaults.idleTimeout,
                    maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize,
                    maxRedirects: Int = ImageLoaderDefaults.maxRedirects,
                    defaultHeaders: [String: String] = ImageLoaderDefaults.headers,
                    allowsInvalidCertificates: Bool = false,
                    maxConnectionsPerHost: Int = 8) {
            self.idleTimeout = idleTimeout
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

    /// Creates a loader with its own connection pool; call ``shutdown()`` when done with it.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.pool = HTTPConnectionPool(maxConnectionsPerOrigin: configuration.maxConnectionsPerHost,
                                       allowsInvalidCertificates: configuration.allowsInvalidCertificates)
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
        let task = Task {
            do {
                try await self.perform(request, hooks: hooks) { event in continuation.yield(event) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Loads in the calling task, handing each event to `sink` as it happens; throws a
    /// ``WebImageError``. The downloader uses this directly to save a stream hop per chunk;
    /// an error thrown by `sink` aborts the load. `sink` is called on the connection's event loop.
    func perform(_ request: ImageLoadRequest, hooks: HTTPLoadHooks,
                 sink: @escaping @Sendable (ImageLoadEvent) throws -> Void) async throws {
        do {
            try await transfer(request, hooks: hooks, sink: sink)
        } catch {
            throw WebImageError.fromLoading(error)
        }
    }

    private func transfer(_ request: ImageLoadRequest, hooks: HTTPLoadHooks,
                          sink: @escaping @Sendable (ImageLoadEvent) throws -> Void) async throws {
        let timeout = request.timeout ?? configuration.idleTimeout
        let maxBodySize = hooks.maxBodySize ?? configuration.maxBodySize
        var url = request.url
        let origin = HTTPOrigin(url)
        // Made at the first redirect: most loads have none.
        var visited: Set<String>?
        var redirects = 0
        while true {
            let hop = redirects == 0 ? origin : HTTPOrigin(url)
            guard HTTPOrigin.isHTTP(scheme: hop.scheme), !hop.host.isEmpty else {
                throw WebImageError.invalidURL(url.absoluteString)
            }
            let sameOrigin = hop == origin
            guard let target = url.requestTarget else { throw WebImageError.invalidURL(url.absoluteString) }
            var fields = headers(for: request, url: url, sameOrigin: sameOrigin, hooks: hooks)
            fields.replaceOrAdd(name: "Host", value: hop.hostHeader)
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: fields)
            let exchange = HTTPExchange(url: url, maxBodySize: maxBodySize, wantsPartialData: request.wantsPartialData,
                                        idleTimeout: timeout, onHeaders: hooks.didReceiveHeaders, sink: sink)
            switch try await exchange.run(head, origin: hop, pool: pool) {
            case .body(let data, let info):
                try sink(.completed(data, info))
                return
            case .notModified(let info):
                try sink(.notModified(info))
                return
            case .status(let status):
                throw WebImageError.httpStatus(status)
            case .redirect(let location):
                redirects += 1
                guard redirects <= (hooks.maxRedirects ?? configuration.maxRedirects) else { throw WebImageError.tooManyRedirects }
                guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                    throw WebImageError.invalidURL(location)
                }
                // A URL seen before in this chain is a loop: fail now rather than after the limit.
                if visited == nil { visited = [request.url.absoluteString] }
                guard visited?.insert(next.absoluteString).inserted == true else { throw WebImageError.tooManyRedirects }
                url = next
            }
        }
    }

    private func headers(for request: ImageLoadRequest, url: URL, sameOrigin: Bool, hooks: HTTPLoadHooks) -> HTTPHeaders {
        let defaults = hooks.defaultHeaders ?? configuration.defaultHeaders
        var merged: [String: (String, String)] = [:]
        merged.reserveCapacity(defaults.count + request.headers.count + 3)
        for (name, value) in defaults { merged[name.lowercased()] = (name, value) }
        for (name, value) in request.headers { merged[name.lowercased()] = (name, value) }
        if let validators = request.validators {
            if let etag = validators.etag { merged["if-none-match"] = ("If-None-Match", etag) }
            if let modified = validators.lastModified { merged["if-modified-since"] = ("If-Modified-Since", modified) }
        }
        if sameOrigin {
            for (name, value) in hooks.sameOriginHeaders(url) { merged[name.lowercased()] = (name, value) }
        } else {
            // Credentials and cookies belong to the origin the caller asked for, never to a redirect target.
            for name in ["authorization", "cookie", "proxy-authorization"] { merged[name] = nil }
        }
        var headers = HTTPHeaders()
        for (_, pair) in merged.sorted(by: { $0.key < $1.key }) { headers.add(name: pair.0, value: pair.1) }
        return headers
    }
}

/// Per-load settings and per-hop callbacks the downloader gives the HTTP loader.
struct HTTPLoadHooks: Sendable {
    /// Replaces the loader's default headers.
    var defaultHeaders: [String: String]?
    /// Replaces the loader's body size limit.
    var maxBodySize: Int64?
    /// Replaces the loader's redirect limit.
    var maxRedirects: Int?
    /// Headers (credentials, cookies) added only to hops on the original origin.
    var sameOriginHeaders: @Sendable (URL) -> [String: String] = { _ in [:] }
    /// Sees every response head (for the cookie jar); `nil` spares copying the headers.
    var didReceiveHeaders: (@Sendable (URL, [(String, String)]) -> Void)?
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
        let name = host.contains(":") ? "[\(host)]" : host
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
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let afterAuthority = text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" }
        guard let start = afterAuthority else { return "/" }
        var target = text[start...]
        if let fragment = target.firstIndex(of: "#") { target = target[..<fragment] }
        if target.isEmpty { return "/" }
        return target.first == "?" ? "/" + target : String(target)
    }
}
