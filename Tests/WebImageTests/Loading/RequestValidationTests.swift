import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Header names and values are checked when the request is built: a bad one fails with a
/// permanent `invalidRequest` before anything is written, and healthy pooled connections stay.
@Suite("Request header validation", .timeLimit(.minutes(1)))
struct RequestValidationTests {
    static let badHeaders: [[String: String]] = [
        ["X-Bad": "a\r\nInjected: 1"], ["X-Bad": "a\nb"], ["X-Bad": "a\u{0}b"], ["X-Bad": "a\u{7F}b"],
        ["Bad Name": "v"], ["X\r\nInjected": "v"], ["": "v"], ["X:Y": "v"],
    ]

    @Test(arguments: LoopbackProtocol.allCases) func aBadHeaderFailsAtOnceAndLeavesThePoolAlone(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader { loader in
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data != nil)
                for bad in Self.badHeaders {
                    let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"), headers: bad)))
                    #expect(outcome.error?.code == "invalidRequest", "\(bad): \(String(describing: outcome.error))")
                    #expect(outcome.error?.isTransient == false)
                }
                #expect(await collect(loader.load(ImageLoadRequest(url: server.url("/a")))).data != nil)
            }
            #expect(server.totalRequestCount == 2)
            #expect(Set(server.requests.map(\.connection)).count == 1, "the healthy connection was closed")
            #expect(server.requests.allSatisfy { $0.headers["injected"] == nil })
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func tabsAndNonASCIIValuesAreFine(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"), headers: ["X-Ok": "a\tb é"])))
                #expect(outcome.error == nil)
            }
            #expect(server.requests.first?.headers["x-ok"] == "a\tb é")
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aBadDefaultHeaderFailsEveryLoad(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            server.route("/a", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(defaultHeaders: ["X-Key": "k\r\nX: y"])) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a"))))
                #expect(outcome.error?.code == "invalidRequest")
            }
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(headers: ["X-Key": "k\ny"])))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a"))))
            #expect(outcome.error?.code == "invalidRequest")
            #expect(server.totalRequestCount == 0)
        }
    }
}
