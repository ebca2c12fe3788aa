import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The completion-handler form of `ImageDownloader.download`: the same downloads as the event
/// streams (shared, queued, cancellable), reported to closures.
@Suite("ImageDownloader completion handlers", .timeLimit(.minutes(1)))
struct ImageDownloaderHandlerTests {
    typealias Completion = Result<DownloadOutcome, WebImageError>

    /// What a progress handler saw, or the token it may reach.
    final class Recorder: Sendable {
        let progress = Locked<[Int64]>([])
        let token = Locked<DownloadToken?>(nil)
    }

    /// Starts a handler download whose completions land in the returned stream.
    private func start(_ downloader: ImageDownloader, _ request: ImageLoadRequest,
                       progress: (@Sendable (Int64, Int64?) -> Void)? = nil) -> (DownloadToken, AsyncStream<Completion>) {
        let (completions, sink) = AsyncStream.makeStream(of: Completion.self)
        let token = downloader.download(request, progress: progress) { result in
            sink.yield(result)
            sink.finish()
        }
        return (token, completions)
    }

    /// Every completion the stream gets (the test expects exactly one).
    private func all(_ completions: AsyncStream<Completion>) async -> [Completion] {
        var all: [Completion] = []
        for await completion in completions { all.append(completion) }
        return all
    }

    /// The error of the one completion there should be, if that completion is a failure.
    private func onlyFailure(_ results: [Completion]) -> WebImageError? {
        guard results.count == 1, case .failure(let error)? = results.first else { return nil }
        return error
    }

    @Test(arguments: LoopbackProtocol.allCases) func deliversTheBodyAndProgress(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(200_000)
            server.route("/img", .image(body, contentType: "image/png"))
            let recorder = Recorder()
            let (_, completions) = start(ImageDownloader(configuration: .speakingCurrentServer(.init())), ImageLoadRequest(url: server.url("/img"))) { received, _ in
                recorder.progress.withLock { $0.append(received) }
            }
            let results = await all(completions)
            #expect(results.count == 1)
            guard case .success(.data(let data, let response))? = results.first else {
                Issue.record("expected data, got \(results)")
                return
            }
            #expect(data == body)
            #expect(response.statusCode == 200)
            let progress = recorder.progress.withLock { $0 }
            #expect(!progress.isEmpty)
            #expect(progress == progress.sorted())
            #expect(progress.last == Int64(body.count))
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func anHTTPErrorIsAFailure(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/missing", .status(404))
            let results = await all(start(ImageDownloader(configuration: .speakingCurrentServer(.init())), ImageLoadRequest(url: server.url("/missing"))).1)
            #expect(onlyFailure(results) == .httpStatus(404), "\(results)")
        }
    }

    @Test func aRefusedRequestCompletesAtOnce() async throws {
        let results = await all(start(ImageDownloader(configuration: .speakingCurrentServer(.init())), ImageLoadRequest(url: URL(string: "gopher://example.com/a.png")!)).1)
        #expect(onlyFailure(results) == .invalidURL("gopher://example.com/a.png"), "\(results)")
    }

    @Test(arguments: LoopbackProtocol.allCases) func cancelCompletesOnceWithCancelled(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/slow", LoopbackResponse(body: .bytes(testBytes(10_000)), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let (token, completions) = start(downloader, ImageLoadRequest(url: server.url("/slow")))
            await server.waitForRequests(1, path: "/slow")
            token.cancel()
            token.cancel()
            let results = await all(completions)
            gate.open()
            #expect(onlyFailure(results) == .cancelled, "\(results)")
            #expect(downloader.runningDownloadCount == 0)
        }
    }

    /// The handlers run outside the downloader's lock: one that cancels its own download from
    /// the progress handler would otherwise deadlock.
    @Test(arguments: LoopbackProtocol.allCases) func theProgressHandlerMayCancelItsDownload(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/held", LoopbackResponse(body: .bytes(testBytes(50_000)), gate: gate, gatePoint: .afterBodyBytes(5_000)))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let recorder = Recorder()
            // Held in the queue until the handler can reach its token.
            downloader.suspend()
            let (token, completions) = start(downloader, ImageLoadRequest(url: server.url("/held"))) { _, _ in
                recorder.token.withLock { $0 }?.cancel()
            }
            recorder.token.withLock { $0 = token }
            downloader.resume()
            let results = await all(completions)
            gate.open()
            #expect(onlyFailure(results) == .cancelled, "\(results)")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aHandlerCallerAndAStreamCallerShareOneRequest(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(40_000)
            let gate = LoopbackGate()
            server.route("/shared", LoopbackResponse(body: .bytes(body), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let streamed = downloader.download(ImageLoadRequest(url: server.url("/shared")))
            // Started before the gate opens, so it joins the running download.
            let (_, completions) = start(downloader, ImageLoadRequest(url: server.url("/shared")))
            await server.waitForRequests(1, path: "/shared")
            gate.open()
            let outcome = await collect(streamed.events)
            let results = await all(completions)
            #expect(outcome.data == body)
            #expect(results.count == 1)
            guard case .success(.data(let data, _))? = results.first else {
                Issue.record("expected data, got \(results)")
                return
            }
            #expect(data == body)
            #expect(server.requestCount(for: "/shared") == 1)
        }
    }
}
