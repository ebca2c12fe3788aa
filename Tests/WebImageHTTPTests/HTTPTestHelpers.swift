import Foundation
import Testing
import WebImageHTTP
import WebImageSupport
import WebImageTestSupport

/// What one HTTP load delivered.
struct HTTPOutcome: Sendable {
    var responses: [HTTPLoadResponse] = []
    var data: Data?
    var error: HTTPLoadError?

    /// Whether the load failed the way a dropped connection or a silent peer does (worth retrying later).
    var failedTransiently: Bool {
        switch error {
        case .connectionFailed, .timedOut: true
        default: false
        }
    }
}

extension HTTPSession.Configuration {
    /// The library's defaults, with a short idle timeout for tests.
    static func testing(idleTimeout: Duration = .seconds(2), maxConnectionsPerHost: Int = 8,
                        defaultHeaders: [String: String] = ["Accept": "image/*"]) -> Self {
        Self(idleTimeout: idleTimeout, resourceTimeout: .seconds(60), connectTimeout: .seconds(10),
             maxBodySize: 64 * 1024 * 1024, maxRedirects: 5, defaultHeaders: defaultHeaders,
             allowsInvalidCertificates: false, trustedCertificatesPEM: [], allowsInsecureRedirects: false,
             redirectPolicy: nil, maxConnectionsPerHost: maxConnectionsPerHost)
    }
}

extension HTTPSession {
    /// Runs one load to its end and gathers what it delivered.
    func load(_ request: HTTPLoadRequest) async -> HTTPOutcome {
        let outcome = Locked(HTTPOutcome())
        let transfer = HTTPTransfer(request, session: self) { event in
            outcome.withLock { outcome in
                switch event {
                case .response(let response): outcome.responses.append(response)
                case .completed(let data, _): outcome.data = data
                case .progress, .partialData, .notModified: break
                }
            }
        }
        let result = await withCheckedContinuation { continuation in
            transfer.start { continuation.resume(returning: $0) }
        }
        return outcome.withLock { outcome in
            if case .failure(let error) = result { outcome.error = error }
            return outcome
        }
    }
}

extension HTTPSession.Configuration: LoopbackClientConfiguration {
    public mutating func requireHTTP2() { httpVersion = .http2 }
}

/// Runs `body` with a session of its own, shut down afterwards even on failure. Inside
/// `withServer(_:)`, the session speaks that server's protocol (see `LoopbackClientConfiguration.speaking(_:)`).
func withSession<T: Sendable>(_ configuration: HTTPSession.Configuration = .testing(),
                              _ body: (HTTPSession) async throws -> T) async throws -> T {
    let configuration = configuration.speaking(LoopbackServer.current)
    return try await withShutdown(of: HTTPSession(configuration: configuration), { await $0.shutdown() }, body)
}
