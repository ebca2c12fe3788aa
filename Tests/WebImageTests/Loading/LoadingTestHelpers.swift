import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// What one load stream delivered.
struct LoadOutcome: Sendable {
    var responses: [ImageLoadResponse] = []
    var progressCount = 0
    var partialCount = 0
    var data: Data?
    var completedResponse: ImageLoadResponse?
    var notModified: ImageLoadResponse?
    var error: WebImageError?
    var otherError: String?
}

/// Drains a load stream into an outcome.
func collect(_ stream: AsyncThrowingStream<ImageLoadEvent, any Error>) async -> LoadOutcome {
    var outcome = LoadOutcome()
    do {
        for try await event in stream {
            switch event {
            case .response(let response): outcome.responses.append(response)
            case .progress: outcome.progressCount += 1
            case .partialData: outcome.partialCount += 1
            case .completed(let data, let response):
                outcome.data = data
                outcome.completedResponse = response
            case .notModified(let response): outcome.notModified = response
            }
        }
    } catch let error as WebImageError {
        outcome.error = error
    } catch {
        outcome.otherError = String(describing: error)
    }
    return outcome
}

/// Runs `body` with an HTTP loader of its own, shut down afterwards. Inside `withServer(_:)` the
/// loader speaks that server's protocol and trusts its certificate (see `LoopbackClientConfiguration.speaking(_:)`).
func withHTTPLoader<T: Sendable>(_ configuration: HTTPClientSettings = .init(idleTimeout: .seconds(2)),
                                 _ body: (HTTPImageLoader) async throws -> T) async throws -> T {
    let configuration = configuration.speaking(LoopbackServer.current)
    return try await withShutdown(of: HTTPImageLoader(configuration: configuration), { try await $0.shutdown() }, body)
}

extension HTTPClientSettings: LoopbackClientConfiguration {
    public mutating func requireHTTP2() { httpVersion = .http2 }
}

extension ImageDownloaderConfiguration: LoopbackClientConfiguration {
    public mutating func requireHTTP2() { httpVersion = .http2 }

    /// `configuration`, speaking the protocol of the test's server (``LoopbackServer/current``)
    /// and trusting its certificate; unchanged outside `withServer(_:)`.
    static func speakingCurrentServer(_ configuration: ImageDownloaderConfiguration) -> ImageDownloaderConfiguration {
        configuration.speaking(LoopbackServer.current)
    }
}

/// Waits until a downloader event matching `predicate` arrives on `events`.
func waitForEvent(_ events: AsyncStream<DownloaderEvent>, _ predicate: (DownloaderEvent) -> Bool) async -> Bool {
    for await event in events where predicate(event) { return true }
    return false
}
