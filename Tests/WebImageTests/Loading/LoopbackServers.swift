import Testing
import WebImageTestSupport

/// The loopback server for the loader suites that run one body over HTTP/1.1, h2 and h2c: every
/// protocol is held to the same expectations.
func withServer(_ http: LoopbackProtocol, maxConcurrentStreams: Int = 100,
                isolation: isolated (any Actor)? = #isolation,
                _ body: (LoopbackServer) async throws -> Void) async throws {
    try await WebImageTestSupport.withServer(http, maxConcurrentStreams: maxConcurrentStreams, body)
}

/// The same for the suites that run a TLS body with and without HTTP/2 (`http2: Bool`).
func withServer(tls: LoopbackTLS? = nil, http2: Bool, isolation: isolated (any Actor)? = #isolation,
                _ body: (LoopbackServer) async throws -> Void) async throws {
    try await WebImageTestSupport.withServer(tls: tls, http2: http2, body)
}
