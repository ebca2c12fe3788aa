#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

extension ImageDownloader {
    /// Changes a request before it is sent; return `nil` to veto it (the load fails with ``WebImageError/rejected(_:)``).
    public typealias RequestModifier = @Sendable (ImageLoadRequest) -> ImageLoadRequest?

    /// Inspects a response head; return `false` to reject it (the load fails with ``WebImageError/rejected(_:)``).
    public typealias ResponseModifier = @Sendable (ImageLoadResponse) -> Bool

    /// Sees a redirect before it is followed: `from` answered with a redirect to `to`. Return `false`
    /// to refuse it (the load fails with ``WebImageError/rejected(_:)``): a server can block private
    /// addresses or hosts it does not know. Runs on an event loop: must be quick and must not block.
    public typealias RedirectPolicy = @Sendable (_ from: URL, _ to: URL) -> Bool

    /// Decides whether a connection may be opened to `address`, which `host` (the URL's host,
    /// lowercased) resolved to, for `port`. Return `false` to refuse: the load fails with
    /// ``WebImageError/rejected(_:)`` before any connection is made.
    ///
    /// With a policy set, the loader resolves the name itself, asks the policy about every address,
    /// and connects to an address it approved: the address checked is the address connected to, so
    /// a name that resolves to a public address for a check and to a private one for the connect
    /// (DNS rebinding) cannot get through. IP literals are asked about as they are. It runs for every
    /// new connection (the first URL and every redirect hop); a pooled connection was checked when opened.
    public typealias ConnectAddressPolicy = @Sendable (_ host: String, _ port: Int, _ address: SocketAddress) -> Bool
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
public struct ImageDownloaderConfiguration: Sendable {
    /// How many network downloads run at once; the rest wait in the queue.
    public var maxConcurrentDownloads: Int
    /// The start order of queued downloads of equal priority.
    public var executionOrder: ImageDownloader.ExecutionOrder
    /// The idle timeout of a request that sets none.
    public var timeout: Duration
    /// Headers sent with every HTTP request (a request's own headers win).
    public var headers: [String: String]
    /// Basic-auth credentials by host name (lowercased); sent only to that host's origin, and
    /// only over https unless ``allowsCredentialsOverHTTP``.
    public var credentials: [String: ImageDownloader.Credential]
    /// Send ``credentials`` over plain http too, where anyone on the path can read them. Off by default.
    public var allowsCredentialsOverHTTP: Bool
    /// Store `Set-Cookie` answers and send them back to the same origin (an in-memory jar per
    /// downloader). The jar keeps origin-bound session cookies (see ``CookieJar``): `Path`,
    /// `Domain` and `Expires` are ignored, `Max-Age=0` deletes, and it is bounded in count and size.
    public var cookiesEnabled: Bool
    /// Skip TLS certificate validation (a separate client is created; call ``ImageDownloader/shutdown()``).
    public var allowsInvalidCertificates: Bool
    /// Extra certificates to trust besides the system's roots, in PEM (a private CA, a
    /// self-signed server); a separate client is created, call ``ImageDownloader/shutdown()``.
    public var trustedCertificatesPEM: [String]
    /// The total deadline of a request that sets none: a download that has not completed this
    /// long after it started fails with ``WebImageError/timedOut``, however steadily it trickles.
    public var resourceTimeout: Duration
    /// Follow redirects from https to plain http (off by default: see ``WebImageError/insecureRedirect(_:)``).
    public var allowsInsecureRedirects: Bool
    /// Sees every redirect's target before it is followed, and may refuse it.
    public var redirectPolicy: ImageDownloader.RedirectPolicy?
    /// Sees every address a new connection would go to, after name resolution, and may refuse
    /// it (an SSRF guard); see ``ImageDownloader/ConnectAddressPolicy``. Setting it gives the
    /// downloader a connection pool of its own.
    public var connectAddressPolicy: ImageDownloader.ConnectAddressPolicy?
    /// Public-key pins and a trust hook for https servers (see ``ImageDownloader/ServerTrust``).
    /// Setting it gives the downloader a connection pool of its own.
    public var serverTrust: ImageDownloader.ServerTrust?
    /// The certificate sent to https servers that ask for one (mutual TLS). Setting it gives the
    /// downloader a connection pool of its own.
    public var clientCertificate: ImageDownloader.ClientCertificate?
    /// Connections kept open per scheme, host and port; `nil` (the default) allows one per
    /// concurrent download. Setting it gives the downloader a connection pool of its own.
    public var maxConnectionsPerHost: Int?
    /// How long a pooled connection may sit idle before it is closed; `nil` (the default) is 60 s.
    /// Setting it gives the downloader a connection pool of its own.
    public var idleConnectionTimeout: Duration?
    /// The proxies HTTP requests go through; by default the environment's (`http_proxy`,
    /// `https_proxy`, `no_proxy`), read when the configuration is made. See ``ImageDownloader/ProxySettings``.
    public var proxy: ImageDownloader.ProxySettings
    /// Which HTTP versions to speak: ``ImageDownloader/HTTPVersion/auto`` (the default) takes
    /// HTTP/2 when an https server offers it by ALPN, else HTTP/1.1. Another value gives the
    /// downloader a connection pool of its own.
    public var httpVersion: ImageDownloader.HTTPVersion = .auto
    /// Sends HTTP downloads that failed transiently again; `nil` (the default): never. See ``ImageDownloader/RetryPolicy``.
    public var retryPolicy: ImageDownloader.RetryPolicy?
    /// The largest body accepted.
    public var maxBodySize: Int64
    /// How many redirects are followed.
    public var maxRedirects: Int
    /// The directory `local:///PATH` URLs are read from; `nil` (the default): `local` URLs are
    /// not loaded. A path resolves inside it or is refused with ``WebImageError/rejected(_:)``
    /// (`..`, encoded slashes, NUL, links that lead out); anything but a regular file, and a
    /// missing one, fails with ``WebImageError/fileSystem(_:)``. A FIFO never blocks the load.
    public var localRoot: String?
    /// Where `s3://BUCKET/KEY` URLs are read from and how they are signed; `nil` (the default):
    /// `s3` URLs are not loaded. They are queued, coalesced (by the `s3://` URL) and sent as the
    /// downloader's http(s) loads are, under the same redirect and connect-address policies.
    public var s3: S3Configuration?
    /// Runs on every request before coalescing; may change it or veto it.
    public var requestModifier: ImageDownloader.RequestModifier?
    /// Runs on every response head; may reject it (failing every caller of the download).
    public var responseModifier: ImageDownloader.ResponseModifier?

    /// Creates a configuration; the defaults match SDWebImage's downloader (6 at once, FIFO, 15 s).
    public init(maxConcurrentDownloads: Int = 6, executionOrder: ImageDownloader.ExecutionOrder = .fifo,
                timeout: Duration = ImageLoaderDefaults.idleTimeout,
                headers: [String: String] = ImageLoaderDefaults.headers,
                credentials: [String: ImageDownloader.Credential] = [:], cookiesEnabled: Bool = true,
                allowsInvalidCertificates: Bool = false, maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize,
                maxRedirects: Int = ImageLoaderDefaults.maxRedirects,
                requestModifier: ImageDownloader.RequestModifier? = nil, responseModifier: ImageDownloader.ResponseModifier? = nil,
                resourceTimeout: Duration = ImageLoaderDefaults.resourceTimeout,
                allowsInsecureRedirects: Bool = false, redirectPolicy: ImageDownloader.RedirectPolicy? = nil,
                allowsCredentialsOverHTTP: Bool = false, trustedCertificatesPEM: [String] = [],
                connectAddressPolicy: ImageDownloader.ConnectAddressPolicy? = nil,
                proxy: ImageDownloader.ProxySettings = .environment(),
                retryPolicy: ImageDownloader.RetryPolicy? = nil) {
        self.proxy = proxy
        self.retryPolicy = retryPolicy
        self.connectAddressPolicy = connectAddressPolicy
        self.maxConcurrentDownloads = maxConcurrentDownloads
        self.executionOrder = executionOrder
        self.timeout = timeout
        self.headers = headers
        self.credentials = credentials
        self.cookiesEnabled = cookiesEnabled
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.maxBodySize = maxBodySize
        self.maxRedirects = maxRedirects
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.resourceTimeout = resourceTimeout
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.redirectPolicy = redirectPolicy
        self.allowsCredentialsOverHTTP = allowsCredentialsOverHTTP
        self.trustedCertificatesPEM = trustedCertificatesPEM
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
