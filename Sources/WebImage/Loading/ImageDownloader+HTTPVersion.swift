import WebImageHTTP

extension ImageDownloader {
    /// Which HTTP versions the downloader speaks.
    public enum HTTPVersion: String, Sendable, Hashable, CaseIterable {
        /// https: HTTP/2 when the server offers it (ALPN), else HTTP/1.1; plain http: HTTP/1.1.
        case auto
        /// HTTP/1.1 only.
        case http1_1
        /// https: HTTP/2 only (a server that does not agree to it fails the load); plain http:
        /// HTTP/2 with prior knowledge (h2c).
        case http2

        var http: HTTPVersionPreference {
            switch self {
            case .auto: .auto
            case .http1_1: .http1_1
            case .http2: .http2
            }
        }
    }
}
