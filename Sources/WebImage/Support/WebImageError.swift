import WebImageHTTP

/// Every failure swift-webimage reports.
///
/// Each case says what happened; ``isTransient`` says whether trying again later may succeed,
/// which decides whether a URL goes on the manager's failed-URL list.
public enum WebImageError: Error, Sendable, Hashable {
    /// The caller cancelled, or the last caller waiting for shared work left.
    case cancelled
    /// The URL cannot be loaded (malformed, or a scheme no loader handles).
    case invalidURL(String)
    /// The server answered with a status outside 200...299 (304 is reported as not-modified, not here).
    case httpStatus(Int)
    /// No bytes arrived for longer than the timeout (or the connection could not be opened within
    /// it, or the load ran past its resource timeout).
    case timedOut
    /// The connection could not be made or broke: refused, reset, lost, DNS failure, offline.
    case connectionFailed(String)
    /// Redirects went on past the limit or in a loop.
    case tooManyRedirects
    /// A request or response modifier vetoed the load.
    case rejected(String)
    /// Something exceeded a limit: the body size, the pixel count, memory.
    case tooLarge(String)
    /// The data is empty.
    case emptyData
    /// The bytes are no format any registered coder decodes (or encodes, when encoding).
    case unsupportedFormat(String)
    /// The bytes are of a known format but broken.
    case corruptData(String)
    /// The data ends before the image does (or before the announced Content-Length).
    case truncatedData(String)
    /// Encoding an image failed.
    case encodingFailed(String)
    /// The URL failed permanently before and is skipped until retried (see the manager's options).
    case blockedFailedURL
    /// A cache-only load found nothing in the cache.
    case notCached
    /// A file could not be read or written.
    case fileSystem(String)
    /// The server's TLS certificate was not trusted (self-signed, expired, another host's, an
    /// unknown authority). Permanent: the same server presents the same certificate next time.
    /// Only ``/WebImageHTTP/HTTPClientSettings/allowsInvalidCertificates`` lets such a load through.
    case untrustedCertificate(String)
    /// The request cannot be sent as given: a header name or value that is not valid HTTP (a line
    /// break, a control character), a timeout that is not positive. Permanent: sending it again
    /// fails the same way.
    case invalidRequest(String)
    /// A redirect would leave https for plain http, where a network attacker could answer in
    /// the server's name (and poison the cache entry of the https URL). Refused unless the
    /// loader's configuration allows insecure redirects.
    case insecureRedirect(String)
    /// A cache namespace that is not one plain directory name (empty, `.`, `..`, with `/`).
    case invalidNamespace(String)
    /// The HTTP proxy (named `host:port`) answered 407: it wants credentials it was not given,
    /// or refused the ones given (see ``/WebImageHTTP/HTTPProxySettings``). Permanent: the same
    /// request through the same proxy fails the same way.
    case proxyAuthenticationRequired(String)
    /// The manager's encode stage admits no more work now (``ImageManagerConfiguration/EncodeStageLimits/maxAdmitted``):
    /// try again shortly.
    case overloaded
    /// A render ran past ``ImageManagerConfiguration/EncodeStageLimits/deadline`` (the duration named): its waiters got
    /// this at once, and the render was stopped.
    case deadlineExceeded(Duration)

    /// Whether trying again later may succeed: timeouts, a connection that could not be made or
    /// was lost (before the response or in the middle of its body), the statuses 408, 429, 500,
    /// 502, 503 and 504, and cancellation are transient; a 404, a 501 (the server will never do
    /// it), corrupt data or a refused redirect are not.
    ///
    /// A failure of a load is judged by the HTTP stack's one rule (`HTTPLoadError.isTransient`),
    /// which the downloader's retry rule (``/WebImageHTTP/HTTPRetryPolicy``) follows too: what it
    /// sends again is transient here, so a URL it gave up on is not put on the manager's
    /// failed-URL list as if it were bad. Only cancellation differs: transient (the caller left,
    /// the URL is fine) but never retried. Of the other failures, a cache-only miss and a file
    /// error may pass (the image stored later, the file written); decoding and the rest do not.
    public var isTransient: Bool {
        switch self {
        case .notCached, .fileSystem, .overloaded, .deadlineExceeded: true
        default: transportError?.isTransient ?? false
        }
    }

    /// A stable machine-readable name of the case (`"httpStatus"`, `"corruptData"`...), used in JSON output.
    public var code: String {
        switch self {
        case .cancelled: "cancelled"
        case .invalidURL: "invalidURL"
        case .httpStatus: "httpStatus"
        case .timedOut: "timedOut"
        case .connectionFailed: "connectionFailed"
        case .tooManyRedirects: "tooManyRedirects"
        case .rejected: "rejected"
        case .tooLarge: "tooLarge"
        case .emptyData: "emptyData"
        case .unsupportedFormat: "unsupportedFormat"
        case .corruptData: "corruptData"
        case .truncatedData: "truncatedData"
        case .encodingFailed: "encodingFailed"
        case .blockedFailedURL: "blockedFailedURL"
        case .notCached: "notCached"
        case .fileSystem: "fileSystem"
        case .untrustedCertificate: "untrustedCertificate"
        case .invalidRequest: "invalidRequest"
        case .insecureRedirect: "insecureRedirect"
        case .invalidNamespace: "invalidNamespace"
        case .proxyAuthenticationRequired: "proxyAuthenticationRequired"
        case .overloaded: "overloaded"
        case .deadlineExceeded: "deadlineExceeded"
        }
    }
}

extension WebImageError: CustomStringConvertible {
    /// A sentence for people.
    public var description: String {
        switch self {
        case .cancelled: "cancelled"
        case .invalidURL(let url): "invalid URL: \(url)"
        case .httpStatus(let status): "HTTP status \(status)"
        case .timedOut: "timed out"
        case .connectionFailed(let reason): "connection failed: \(reason)"
        case .tooManyRedirects: "too many redirects"
        case .rejected(let reason): "rejected: \(reason)"
        case .tooLarge(let reason): "too large: \(reason)"
        case .emptyData: "empty data"
        case .unsupportedFormat(let what): "unsupported format: \(what)"
        case .corruptData(let reason): "corrupt data: \(reason)"
        case .truncatedData(let reason): "truncated data: \(reason)"
        case .encodingFailed(let reason): "encoding failed: \(reason)"
        case .blockedFailedURL: "URL failed before; not retried without retryFailed"
        case .notCached: "not in the cache"
        case .fileSystem(let reason): "file system: \(reason)"
        case .untrustedCertificate(let reason): "untrusted TLS certificate: \(reason)"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .insecureRedirect(let target): "refused redirect from https to plain http: \(target)"
        case .invalidNamespace(let reason): "invalid cache namespace: \(reason)"
        case .proxyAuthenticationRequired(let proxy): "the proxy \(proxy) requires authentication (407)"
        case .overloaded: "too much work admitted; try again later"
        case .deadlineExceeded(let limit): "the render took longer than \(limit)"
        }
    }
}
