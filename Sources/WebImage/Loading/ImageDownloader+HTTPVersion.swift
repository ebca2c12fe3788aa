import WebImageHTTP

extension ImageDownloader {
    /// Which HTTP versions the downloader speaks: ``/WebImageHTTP/HTTPVersionPreference/auto`` (https: HTTP/2
    /// when the server offers it, else HTTP/1.1), ``/WebImageHTTP/HTTPVersionPreference/http1_1`` or
    /// ``/WebImageHTTP/HTTPVersionPreference/http2`` (plain http: h2c with prior knowledge).
    @available(*, deprecated, renamed: "HTTPVersionPreference")
    public typealias HTTPVersion = HTTPVersionPreference
}
