/// Which HTTP versions a client speaks.
public enum HTTPVersionPreference: String, Sendable, Hashable, CaseIterable {
    /// https: HTTP/2 when the server offers it by ALPN, else HTTP/1.1; plain http: HTTP/1.1.
    case auto
    /// HTTP/1.1 only (no ALPN offer of `h2`).
    case http1_1
    /// https: HTTP/2 only (ALPN offers `h2` alone; a server that does not take it fails the connect);
    /// plain http: HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3), no upgrade dance.
    case http2

    /// The ALPN protocols the TLS handshake offers, most wanted first.
    var alpnProtocols: [String] {
        switch self {
        case .auto: ["h2", "http/1.1"]
        case .http1_1: ["http/1.1"]
        case .http2: ["h2"]
        }
    }

    /// Whether a new connection to `origin` is expected to speak HTTP/2 before anything is known
    /// of the server: then loads wait for that one connection rather than each opening their own.
    /// Plain http through a forwarding proxy stays HTTP/1.1 (the proxy reads the request).
    func expectsHTTP2(_ origin: HTTPOrigin) -> Bool {
        switch self {
        case .http1_1: false
        case .auto: origin.scheme == "https"
        case .http2: origin.scheme == "https" || origin.proxy == nil
        }
    }

    /// Whether a plain-http connection to `origin` opens with the HTTP/2 preface (h2c prior knowledge).
    func usesPriorKnowledge(_ origin: HTTPOrigin) -> Bool {
        self == .http2 && origin.scheme == "http" && origin.proxy == nil
    }
}
