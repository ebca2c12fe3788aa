import Foundation
import Testing
import WebImage
import WebImageTestSupport

@Suite("ImageDownloader coalescing", .timeLimit(.minutes(1)))
struct ImageDownloaderCoalescingTests {
    @Test(arguments: LoopbackProtocol.allCases) func hundredCallersShareOneRequest(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(50_000)
            let gate = LoopbackGate()
            server.route("/one", LoopbackResponse(body: .bytes(body), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let tokens = (0..<100).map { _ in downloader.download(ImageLoadRequest(url: server.url("/one"))) }
            await server.waitForRequests(1, path: "/one")
            gate.open()
            let outcomes = await withTaskGroup(of: LoadOutcome.self) { group in
                for token in tokens { group.addTask { await collect(token.events) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == 100)
            #expect(outcomes.allSatisfy { $0.data == body })
            #expect(outcomes.allSatisfy { $0.responses.count == 1 })
            #expect(server.requestCount(for: "/one") == 1)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func cancellingNinetyNineStillDeliversToTheLast(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(30_000)
            let gate = LoopbackGate()
            server.route("/img", LoopbackResponse(body: .bytes(body), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let tokens = (0..<100).map { _ in downloader.download(ImageLoadRequest(url: server.url("/img"))) }
            await server.waitForRequests(1, path: "/img")
            for token in tokens.dropLast() { token.cancel() }
            gate.open()
            let last = await collect(try #require(tokens.last).events)
            #expect(last.data == body)
            for token in tokens.prefix(3) {
                let outcome = await collect(token.events)
                #expect(outcome.error == .cancelled)
                #expect(outcome.data == nil)
            }
            #expect(server.requestCount(for: "/img") == 1)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func cancellingEveryCallerStopsTheRequest(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/never", LoopbackResponse(body: .bytes(testBytes(100_000)), gate: gate, gatePoint: .afterBodyBytes(1_000)))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let events = downloader.events()
            let tokens = (0..<100).map { _ in downloader.download(ImageLoadRequest(url: server.url("/never"))) }
            // Wait until bytes flow, so the request is surely on the wire.
            var iterator = tokens[0].events.makeAsyncIterator()
            while let event = try await iterator.next() {
                if case .progress = event { break }
            }
            #expect(downloader.runningDownloadCount == 1)
            for token in tokens { token.cancel() }
            #expect(await waitForEvent(events) { if case .cancelled = $0 { true } else { false } })
            #expect(downloader.runningDownloadCount == 0)
            #expect(downloader.queuedDownloadCount == 0)
            // The server sees the client hang up in the middle of the body.
            await server.waitForAborted(1, path: "/never")
            #expect(server.completedCount(for: "/never") == 0)
            let outcome = await collect(tokens[1].events)
            #expect(outcome.error == .cancelled)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func droppingTheLoadStreamDetachesTheCaller(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/held", LoopbackResponse(body: .bytes(testBytes(1_000)), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let events = downloader.events()
            let task = Task { await collect(downloader.load(ImageLoadRequest(url: server.url("/held")))) }
            await server.waitForRequests(1, path: "/held")
            task.cancel()
            _ = await task.value
            #expect(await waitForEvent(events) { if case .cancelled = $0 { true } else { false } })
            #expect(downloader.runningDownloadCount == 0)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func lateJoinerGetsTheResponseAndTheResult(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let body = testBytes(20_000)
            let gate = LoopbackGate()
            server.route("/late", LoopbackResponse(body: .bytes(body), gate: gate, gatePoint: .afterBodyBytes(5_000)))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let first = downloader.download(ImageLoadRequest(url: server.url("/late")))
            var iterator = first.events.makeAsyncIterator()
            while let event = try await iterator.next() {
                if case .progress = event { break }
            }
            let late = downloader.download(ImageLoadRequest(url: server.url("/late")))
            gate.open()
            let outcome = await collect(late.events)
            #expect(outcome.data == body)
            #expect(outcome.responses.count == 1)
            var firstData: Data?
            while let event = try await iterator.next() {
                if case .completed(let data, _) = event { firstData = data }
            }
            #expect(firstData == body)
            #expect(server.requestCount(for: "/late") == 1)
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func differentHeadersAreDifferentDownloads(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/h", LoopbackResponse(body: .bytes(testBytes(100)), gate: gate))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            let a = downloader.download(ImageLoadRequest(url: server.url("/h"), headers: ["X-Variant": "a"]))
            let b = downloader.download(ImageLoadRequest(url: server.url("/h"), headers: ["X-Variant": "b"]))
            await server.waitForRequests(2, path: "/h")
            gate.open()
            #expect(await collect(a.events).data?.count == 100)
            #expect(await collect(b.events).data?.count == 100)
            #expect(Set(server.requests.compactMap { $0.headers["x-variant"] }) == ["a", "b"])
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aFinishedDownloadIsNotJoined(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/again", .image(testBytes(100), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init()))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/again")))).data != nil)
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/again")))).data != nil)
            #expect(server.requestCount(for: "/again") == 2)
        }
    }
}
