import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// A host that accepts TCP and never completes TLS must not hold a load (or a pool slot) for
/// hours: the connect deadline covers TCP and TLS, the load's own timeout fires while connecting,
/// and cancelling works while the handshake hangs.
@Suite("Connecting to a host that never answers", .timeLimit(.minutes(1)))
struct ConnectDeadlineTests {
    @Test func theLoadsTimeoutFiresWhileTheTLSHandshakeHangs() async throws {
        try await withSilentListener { listener in
            try await withHTTPLoader(.init(idleTimeout: .seconds(30))) { loader in
                let url = listener.url("/a.jpg")
                let start = ContinuousClock.now
                let outcome = await finishing(within: .seconds(10)) {
                    await collect(loader.load(ImageLoadRequest(url: url, timeout: .milliseconds(300))))
                }
                #expect(outcome != nil, "the load was still connecting after 10 s")
                #expect(outcome?.error == .timedOut)
                #expect(ContinuousClock.now - start < .seconds(8))
            }
            // The half-open connection was closed, not left to TCP keepalive.
            let closed: Void? = await finishing(within: .seconds(5)) { await listener.waitForClosed(1) }
            #expect(closed != nil)
        }
    }

    @Test func cancellingWhileTheTLSHandshakeHangsEndsTheLoadAndItsConnection() async throws {
        try await withSilentListener { listener in
            try await withHTTPLoader(.init(idleTimeout: .seconds(30))) { loader in
                let url = listener.url("/a.jpg")
                let task = Task { await collect(loader.load(ImageLoadRequest(url: url))) }
                await listener.waitForAccepted(1)
                task.cancel()
                let outcome = await finishing(within: .seconds(5)) { await task.value }
                #expect(outcome != nil, "the cancelled load was still connecting after 5 s")
                #expect(outcome?.error == .cancelled)
                let closed: Void? = await finishing(within: .seconds(5)) { await listener.waitForClosed(1) }
                #expect(closed != nil, "the connection being set up was left open")
            }
        }
    }

    @Test func cancellingADownloaderTokenWhileConnectingEndsIt() async throws {
        try await withSilentListener { listener in
            let downloader = ImageDownloader(configuration: .init(timeout: .seconds(30)))
            let token = downloader.download(ImageLoadRequest(url: listener.url("/b.jpg")))
            await listener.waitForAccepted(1)
            token.cancel()
            let outcome = await finishing(within: .seconds(5)) { await collect(token.events) }
            #expect(outcome?.error == .cancelled)
            let closed: Void? = await finishing(within: .seconds(5)) { await listener.waitForClosed(1) }
            #expect(closed != nil, "the connection being set up was left open")
            #expect(downloader.runningDownloadCount == 0)
        }
    }
}

/// Timeouts given as extreme values: clamped or refused with a typed error, never a trap.
@Suite("Extreme timeout values", .timeLimit(.minutes(1)))
struct ExtremeTimeoutTests {
    @Test func aHugeTimeoutIsClamped() async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(Int64.max))) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"), timeout: .seconds(Int64.max))))
                #expect(outcome.error == nil)
                #expect(outcome.data?.count == 100)
            }
        }
    }

    @Test func aNegativeOrZeroTimeoutIsAnInvalidRequest() async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            try await withHTTPLoader { loader in
                for timeout: Duration in [.seconds(-1), .zero] {
                    let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"), timeout: timeout)))
                    #expect(outcome.error?.code == "invalidRequest", "\(timeout): \(String(describing: outcome.error))")
                    #expect(outcome.error?.isTransient == false)
                }
            }
            #expect(server.totalRequestCount == 0)
        }
    }

    @Test func extremeLoaderSettingsAreClampedOrRefused() async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), resourceTimeout: .seconds(Int64.max),
                                           connectTimeout: .seconds(Int64.max))) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data?.count == 100)
            }
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), connectTimeout: .seconds(-1))) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).error?.code == "invalidRequest")
            }
            let downloader = ImageDownloader(configuration: .init(timeout: .seconds(-3)))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/a")))).error?.code == "invalidRequest")
            #expect(server.totalRequestCount == 1)
        }
    }
}
