#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

extension ImageDownloader {
    /// Changes a request before it is sent; return `nil` to veto it (the load fails with ``WebImageError/rejected(_:)``).
    public typealias RequestModifier = @Sendable (ImageLoadRequest) -> ImageLoadRequest?

    /// Inspects a response head; return `false` to reject it (the load fails with ``WebImageError/rejected(_:)``).
    public typealias ResponseModifier = @Sendable (ImageLoadResponse) -> Bool

    /// Sees a redirect before it is followed (see ``/WebImageHTTP/HTTPRedirectPolicy``); a refusal
    /// fails the load with ``WebImageError/rejected(_:)``.
    @available(*, deprecated, renamed: "HTTPRedirectPolicy")
    public typealias RedirectPolicy = HTTPRedirectPolicy

    /// Decides whether a connection may be opened to an address a host resolved to (an SSRF
    /// guard; see ``/WebImageHTTP/ConnectAddressPolicy``); a refusal fails the load with
    /// ``WebImageError/rejected(_:)`` before any connection is made.
    @available(*, deprecated, renamed: "ConnectAddressPolicy")
    public typealias ConnectAddressPolicy = WebImageHTTP.ConnectAddressPolicy
}

extension ImageDownloader {
    /// The order queued downloads of equal priority start in.
    public enum ExecutionOrder: Sendable, Hashable {
        /// First queued, first started (the default).
        case fifo
        /// Last queued, first started (what is on screen now matters most).
        case lifo
    }
}

extension ImageDownloader {
    /// A user name and password sent as HTTP basic authentication.
    public struct Credential: Sendable, Hashable {
        /// The user name.
        public var user: String
        /// The password.
        public var password: String

        /// Creates a credential.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        /// The `Authorization` header value.
        public var authorizationHeader: String {
            "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }
}

/// How an ``ImageDownloader`` schedules and shapes its requests.
///
/// Its HTTP settings are ``http``, read and written as the configuration's own
/// (`configuration.maxBodySize`, `configuration.proxy`, `configuration.maxConnectionsPerHost`...:
/// every property of ``/WebImageHTTP/HTTPClientSettings``), declared there once for the downloader
/// and for ``HTTPImageLoader``. A downloader leaves `maxConnectionsPerHost` unset by default
/// (`nil`): it shares ``HTTPImageLoader/shared``'s pool, or allows one connection per concurrent
/// download in a pool of its own; setting it gives the downloader a pool of its own.
@dynamicMemberLookup
public struct ImageDownloaderConfiguration: Sendable {
    /// How many network downloads run at once; the rest wait in the queue.
    public var maxConcurrentDownloads: Int
    /// The start order of queued downloads of equal priority.
    public var executionOrder: ImageDownloader.ExecutionOrder
    /// The HTTP settings of every download: limits, timeouts, redirects, trust, proxy, HTTP
    /// version, retries. Those of a connection pool (TLS trust and certificates, the connect
    /// address policy, the idle connection timeout, the HTTP version) give the downloader a pool
    /// of its own when they differ from the shared one's (call ``ImageDownloader/shutdown()``).
    public var http: HTTPClientSettings
    /// Basic-auth credentials by host name (lowercased); sent only to that host's origin, and
    /// only over https unless ``allowsCredentialsOverHTTP``.
    public var credentials: [String: ImageDownloader.Credential]
    /// Send ``credentials`` over plain http too, where anyone on the path can read them. Off by default.
    public var allowsCredentialsOverHTTP: Bool
    /// Store `Set-Cookie` answers and send them back to the same origin (an in-memory jar per
    /// downloader). The jar keeps origin-bound session cookies (the HTTP stack's cookie jar): `Path`,
    /// `Domain` and `Expires` are ignored, `Max-Age=0` deletes, and it is bounded in count and size.
    public var cookiesEnabled: Bool
    /// The directory `local:///PATH` URLs are read from; `nil` (the default): `local` URLs are
    /// not loaded. A path resolves inside it or is refused with ``WebImageError/rejected(_:)``
    /// (`..`, encoded slashes, NUL, links that lead out); anything but a regular file, and a
    /// missing one, fails with ``WebImageError/fileSystem(_:)``. A FIFO never blocks the load.
    public var localRoot: String?
    /// Where `s3://BUCKET/KEY` URLs are read from and how they are signed; `nil` (the default):
    /// `s3` URLs are not loaded. They are queued and coalesced (by the `s3://` URL) as the
    /// downloader's http(s) loads are, and sent over connections of their own: to a configured
    /// endpoint past ``/WebImageHTTP/HTTPClientSettings/connectAddressPolicy`` (the operator
    /// named it), never redirected, with no cookie or per-host credential (see `S3Transport`).
    public var s3: S3Configuration?
    /// Runs on every request before coalescing; may change it or veto it.
    public var requestModifier: ImageDownloader.RequestModifier?
    /// Runs on every response head; may reject it (failing every caller of the download).
    public var responseModifier: ImageDownloader.ResponseModifier?

    /// The connections per host of a pool the downloader makes for itself: the HTTP settings'
    /// own number, else one per concurrent download.
    var ownPoolConnectionsPerHost: Int { max(http.maxConnectionsPerHost ?? maxConcurrentDownloads, 1) }

    /// The idle timeout of a request that sets none: ``http``'s `idleTimeout`, which
    /// `configuration.idleTimeout` reads and writes under its one name.
    @available(*, deprecated, renamed: "idleTimeout")
    public var timeout: Duration {
        get { http.idleTimeout }
        set { http.idleTimeout = newValue }
    }

    /// Headers sent with every HTTP request, a request's own headers winning: ``http``'s
    /// `defaultHeaders`, which `configuration.defaultHeaders` reads and writes under its one name.
    @available(*, deprecated, renamed: "defaultHeaders")
    public var headers: [String: String] {
        get { http.defaultHeaders }
        set { http.defaultHeaders = newValue }
    }

    /// Extra certificates to trust besides the system's roots, in PEM (``http``'s; a separate
    /// connection pool is made). Spelled out, as ``httpVersion`` is, for code that names it without
    /// `self.` or through a protocol, which dynamic member lookup does not reach.
    public var trustedCertificatesPEM: [String] {
        get { http.trustedCertificatesPEM }
        set { http.trustedCertificatesPEM = newValue }
    }

    /// Which HTTP versions to speak (``http``'s; another value than ``/WebImageHTTP/HTTPVersionPreference/auto``
    /// gives the downloader a connection pool of its own).
    public var httpVersion: HTTPVersionPreference {
        get { http.httpVersion }
        set { http.httpVersion = newValue }
    }

    /// Every other HTTP setting of ``http`` under its own name: `configuration.maxBodySize` is
    /// `configuration.http.maxBodySize`.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<HTTPClientSettings, Value>) -> Value {
        get { http[keyPath: keyPath] }
        set { http[keyPath: keyPath] = newValue }
    }

    /// Creates a configuration; the defaults match SDWebImage's downloader (6 at once, FIFO, 15 s).
    public init(maxConcurrentDownloads: Int = 6, executionOrder: ImageDownloader.ExecutionOrder = .fifo,
                timeout: Duration = ImageLoaderDefaults.idleTimeout,
                headers: [String: String] = ImageLoaderDefaults.headers,
                credentials: [String: ImageDownloader.Credential] = [:], cookiesEnabled: Bool = true,
                allowsInvalidCertificates: Bool = false, maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize,
                maxRedirects: Int = ImageLoaderDefaults.maxRedirects,
                requestModifier: ImageDownloader.RequestModifier? = nil, responseModifier: ImageDownloader.ResponseModifier? = nil,
                resourceTimeout: Duration = ImageLoaderDefaults.resourceTimeout,
                allowsInsecureRedirects: Bool = false, redirectPolicy: HTTPRedirectPolicy? = nil,
                allowsCredentialsOverHTTP: Bool = false, trustedCertificatesPEM: [String] = [],
                connectAddressPolicy: ConnectAddressPolicy? = nil,
                proxy: HTTPProxySettings = .environment(),
                retryPolicy: HTTPRetryPolicy? = nil) {
        http = HTTPClientSettings(idleTimeout: timeout, maxBodySize: maxBodySize, maxRedirects: maxRedirects,
                                  defaultHeaders: headers, allowsInvalidCertificates: allowsInvalidCertificates,
                                  resourceTimeout: resourceTimeout, trustedCertificatesPEM: trustedCertificatesPEM,
                                  allowsInsecureRedirects: allowsInsecureRedirects, redirectPolicy: redirectPolicy,
                                  connectAddressPolicy: connectAddressPolicy, proxy: proxy)
        http.retryPolicy = retryPolicy
        // Unset: the shared pool's count, or one per concurrent download in a pool of the downloader's own.
        http.maxConnectionsPerHost = nil
        self.maxConcurrentDownloads = maxConcurrentDownloads
        self.executionOrder = executionOrder
        self.credentials = credentials
        self.cookiesEnabled = cookiesEnabled
        self.allowsCredentialsOverHTTP = allowsCredentialsOverHTTP
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
    }
}

extension ImageDownloader {
    /// Per-request hooks for ``ImageDownloader/download(_:options:)``.
    public struct Options: Sendable {
        /// Runs after the downloader's request modifier; may change the request or veto it.
        public var requestModifier: ImageDownloader.RequestModifier?
        /// Runs on the response head for this caller only; `false` fails this caller with ``WebImageError/rejected(_:)``.
        public var responseModifier: ImageDownloader.ResponseModifier?
        /// Whether this caller's stream carries `.response` and `.progress` events. A caller that
        /// only wants the bytes says `false` and is woken once, for the final event (partial data
        /// still arrives when the request asks for it), like SDWebImage with no progress block.
        public var reportsProgress: Bool

        /// Creates options.
        public init(requestModifier: ImageDownloader.RequestModifier? = nil, responseModifier: ImageDownloader.ResponseModifier? = nil,
                    reportsProgress: Bool = true) {
            self.requestModifier = requestModifier
            self.responseModifier = responseModifier
            self.reportsProgress = reportsProgress
        }
    }
}
