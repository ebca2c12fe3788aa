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

/// Runs `body` with a fresh loopback server (HTTPS with `tls`), shutting it down afterwards even on failure.
func withServer<T: Sendable>(tls: LoopbackTLS? = nil, _ body: (LoopbackServer) async throws -> T) async throws -> T {
    let server = try await LoopbackServer.start(tls: tls)
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

/// Runs `body` with an HTTP loader of its own, shut down afterwards.
func withHTTPLoader<T: Sendable>(_ configuration: HTTPImageLoader.Configuration = .init(idleTimeout: .seconds(2)),
                                 _ body: (HTTPImageLoader) async throws -> T) async throws -> T {
    let loader = HTTPImageLoader(configuration: configuration)
    do {
        let result = try await body(loader)
        try await loader.shutdown()
        return result
    } catch {
        try? await loader.shutdown()
        throw error
    }
}

/// `count` bytes of a recognisable pattern.
func testBytes(_ count: Int, seed: UInt8 = 7) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}

/// Waits until a downloader event matching `predicate` arrives on `events`.
func waitForEvent(_ events: AsyncStream<DownloaderEvent>, _ predicate: (DownloaderEvent) -> Bool) async -> Bool {
    for await event in events where predicate(event) { return true }
    return false
}
