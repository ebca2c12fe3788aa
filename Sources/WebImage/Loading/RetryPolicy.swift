import WebImageHTTP

extension ImageDownloader {
    /// How a downloader sends an HTTP download again after a transient failure, like Kingfisher's
    /// `DelayRetryStrategy`. Off by default (``ImageDownloaderConfiguration/retryPolicy`` is `nil`):
    /// a retry multiplies the load on a server that is already failing and delays the error a UI
    /// may want to show, so a caller opts in.
    ///
    /// Retried: no connection or a connection lost, a body cut short, no bytes for the idle
    /// timeout, and the statuses 408, 429, 500, 502, 503 and 504. Never retried: other statuses,
    /// untrusted certificates, refused redirects, limits, cancellation, the resource timeout.
    /// These are exactly the failures ``WebImageError/isTransient`` calls transient (one
    /// definition), cancellation aside, so a URL given up on is not recorded as a bad one.
    ///
    /// Retry *n* waits ``baseDelay`` × 2^(n−1), at most ``maxDelay``, less a random part of up
    /// to ``jitter`` of it (so that many clients do not come back at once). A `Retry-After` the
    /// server sends (seconds or an HTTP date) replaces the computed wait, capped at ``maxDelay``
    /// too. No wait runs past the download's resource timeout: the download fails instead.
    ///
    /// Bytes already handed to a progressive caller (partial data) are never taken back: such a
    /// download is retried only when the server takes byte ranges (`Accept-Ranges: bytes`) and
    /// gave a validator (a strong `ETag` or `Last-Modified`), and then it resumes where it stopped
    /// (`Range` with `If-Range`); a server that answers with anything but that range fails it.
    /// The manager sees the last failure only, so its failed-URL rules are unchanged.
    public struct RetryPolicy: Sendable, Hashable {
        /// How many times a download is sent again after its first try.
        public var maxRetries: Int
        /// The wait before the first retry; it doubles with each next one.
        public var baseDelay: Duration
        /// The longest wait, computed or asked for with `Retry-After`.
        public var maxDelay: Duration
        /// The random part of each computed wait, from 0 (none) to 1 (anywhere from no wait to the full one).
        public var jitter: Double

        /// A policy of `maxRetries` retries, waiting `baseDelay` then doubling, at most `maxDelay`.
        public init(maxRetries: Int = 2, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(30),
                    jitter: Double = 0.5) {
            self.maxRetries = maxRetries
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
            self.jitter = jitter
        }

        /// The HTTP stack's form.
        var httpPolicy: HTTPRetryPolicy {
            HTTPRetryPolicy(maxRetries: max(0, maxRetries), baseDelay: baseDelay, maxDelay: maxDelay, jitter: jitter)
        }
    }
}
