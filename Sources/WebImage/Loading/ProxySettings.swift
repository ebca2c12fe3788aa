import WebImageHTTP

extension ImageDownloader {
    /// Which HTTP proxy requests go through (see ``/WebImageHTTP/HTTPProxySettings``). A proxy that answers 407
    /// fails the load with ``WebImageError/proxyAuthenticationRequired(_:)``; one that cannot be
    /// used, with ``WebImageError/invalidRequest(_:)``.
    @available(*, deprecated, renamed: "HTTPProxySettings")
    public typealias ProxySettings = HTTPProxySettings
}

extension HTTPProxySettings {
    /// Throws ``WebImageError/invalidRequest(_:)`` when a proxy is set that loads could not use
    /// (another scheme than http, not a URL): those loads would fail with it.
    public func validate() throws(WebImageError) {
        if let problem { throw WebImageError(problem) }
    }
}
