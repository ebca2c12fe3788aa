import WebImageHTTP

extension ImageDownloader {
    /// Which HTTP versions the downloader speaks: ``HTTPVersionPreference/auto`` (https: HTTP/2
    /// when the server offers it, else HTTP/1.1), ``HTTPVersionPreference/http1_1`` or
    /// ``HTTPVersionPreference/http2`` (plain http: h2c with prior knowledge).
    public typealias HTTPVersion = HTTPVersionPreference
}
