/// Why an HTTP load failed, as the HTTP stack reports it.
///
/// The cases mirror the loading cases of the library's `WebImageError` one to one, so the loader
/// that adapts this module maps them without judgement; ``consumer(_:)`` carries, untouched, an
/// error the caller's event sink threw.
package enum HTTPLoadError: Error {
    /// The URL is not an http(s) URL this client can send a request for.
    case invalidURL(String)
    /// The request cannot be sent: a header that is not valid HTTP/1.1, a timeout that is not positive...
    case invalidRequest(String)
    /// The server answered with a status the load cannot use (not 2xx, 304 or a followed redirect).
    case httpStatus(Int)
    /// More redirects than allowed, or a redirect loop.
    case tooManyRedirects
    /// A redirect from https to plain http, refused.
    case insecureRedirect(String)
    /// The redirect policy refused a redirect.
    case rejected(String)
    /// The body is larger than allowed.
    case tooLarge(String)
    /// The body ended before its announced length.
    case truncatedData(String)
    /// A successful response with an empty body.
    case emptyData
    /// No connection, a reset, a malformed response, a failed TLS handshake...
    case connectionFailed(String)
    /// The server's certificate failed verification.
    case untrustedCertificate(String)
    /// The proxy (named `host:port`) answered 407: it wants credentials it was not given, or
    /// refused the ones in the proxy URL.
    case proxyAuthenticationRequired(String)
    /// The idle, connect or resource timeout expired.
    case timedOut
    /// The load was cancelled, or the session shut down.
    case cancelled
    /// The event sink threw this error: the load ended with it.
    case consumer(any Error)
}

extension HTTPLoadError {
    /// The statuses a server sends for a condition that may pass.
    static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Whether trying again later may succeed: the package's one rule of a transient failure.
    /// Timeouts, a connection that could not be made or was lost (before the response or in the
    /// middle of its body), the statuses 408, 429, 500, 502, 503 and 504, and cancellation (the
    /// caller left; the URL is fine) are transient; a 404, a 501 (the server will never do it),
    /// an untrusted certificate, a refused redirect or a limit are not, nor is an error the
    /// caller's sink threw (it is the caller's, not the load's).
    ///
    /// ``HTTPRetryPolicy`` sends the transient failures again, cancellation aside; WebImage's
    /// `WebImageError.isTransient` answers with this rule for every failure of a load, so a URL
    /// the retries gave up on is not recorded as a bad one by the manager's failed-URL list.
    package var isTransient: Bool {
        switch self {
        case .cancelled, .timedOut, .connectionFailed, .truncatedData: true
        case .httpStatus(let status): Self.transientStatuses.contains(status)
        case .invalidURL, .invalidRequest, .tooManyRedirects, .insecureRedirect, .rejected, .tooLarge, .emptyData,
             .untrustedCertificate, .proxyAuthenticationRequired, .consumer: false
        }
    }
}
