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

/// The configured connect timeout bounds TCP and TLS together.
@Suite("Connect timeout", .timeLimit(.minutes(1)))
struct ConnectTimeoutTests {
    @Test func theConnectTimeoutCoversTheTLSHandshake() async throws {
        #expect(HTTPClientSettings().connectTimeout == .seconds(10))
        try await withSilentListener { listener in
            try await withHTTPLoader(.init(idleTimeout: .seconds(30), connectTimeout: .milliseconds(300))) { loader in
                let url = listener.url("/a.jpg")
                let start = ContinuousClock.now
                let outcome = await finishing(within: .seconds(10)) { await collect(loader.load(ImageLoadRequest(url: url))) }
                #expect(outcome?.error == .timedOut)
                #expect(ContinuousClock.now - start < .seconds(8))
            }
            let closed: Void? = await finishing(within: .seconds(5)) { await listener.waitForClosed(1) }
            #expect(closed != nil)
        }
    }

    @Test func aTimedOutConnectGivesItsSlotBack() async throws {
        try await withSilentListener { listener in
            // One connection per host: a slot the timed-out connect kept would make the second load wait forever.
            try await withHTTPLoader(.init(idleTimeout: .seconds(30), maxConnectionsPerHost: 1,
                                           connectTimeout: .milliseconds(200))) { loader in
                let url = listener.url("/a.jpg")
                for _ in 0..<2 {
                    let outcome = await finishing(within: .seconds(5)) { await collect(loader.load(ImageLoadRequest(url: url))) }
                    #expect(outcome?.error == .timedOut)
                }
            }
            let bothConnected: Void? = await finishing(within: .seconds(5)) { await listener.waitForAccepted(2) }
            #expect(bothConnected != nil, "the second load never connected")
        }
    }
}
