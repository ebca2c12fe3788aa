import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Timeouts given as extreme values: clamped or refused with a typed error, never a trap.
@Suite("Extreme timeout values", .timeLimit(.minutes(1)))
struct ExtremeTimeoutTests {
    @Test(arguments: LoopbackProtocol.allCases) func aHugeTimeoutIsClamped(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(Int64.max))) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"), timeout: .seconds(Int64.max))))
                #expect(outcome.error == nil)
                #expect(outcome.data?.count == 100)
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aNegativeOrZeroTimeoutIsAnInvalidRequest(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
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

    @Test(arguments: LoopbackProtocol.allCases) func extremeLoaderSettingsAreClampedOrRefused(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), resourceTimeout: .seconds(Int64.max),
                                           connectTimeout: .seconds(Int64.max))) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data?.count == 100)
            }
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), connectTimeout: .seconds(-1))) { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).error?.code == "invalidRequest")
            }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(timeout: .seconds(-3))))
            #expect(await collect(downloader.load(ImageLoadRequest(url: server.url("/a")))).error?.code == "invalidRequest")
            #expect(server.totalRequestCount == 1)
        }
    }
}
