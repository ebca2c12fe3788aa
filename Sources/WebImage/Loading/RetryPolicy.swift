import WebImageHTTP

extension ImageDownloader {
    /// How a downloader sends an HTTP download again after a transient failure (see
    /// ``/WebImageHTTP/HTTPRetryPolicy``). The failures retried are exactly those ``WebImageError/isTransient``
    /// calls transient (one rule, the HTTP stack's), cancellation aside, so a URL given up on is not
    /// recorded as a bad one. The manager sees the last failure only, so its failed-URL rules are unchanged.
    @available(*, deprecated, renamed: "HTTPRetryPolicy")
    public typealias RetryPolicy = HTTPRetryPolicy
}
