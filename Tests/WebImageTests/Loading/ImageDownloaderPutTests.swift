import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// The downloader's `PUT` (a result store's writes) over HTTP/1.1 and HTTP/2: the body goes out
/// with its length, an empty 2xx answer completes it, a redirect is not followed, an error status fails it.
@Suite("ImageDownloader.put", .timeLimit(.minutes(1)))
struct ImageDownloaderPutTests {
    private func check(_ server: LoopbackServer, _ downloader: ImageDownloader) async throws {
        server.route("/objects/a", LoopbackResponse(status: 200, headers: ["ETag": "\"1\""]))
        server.route("/objects/moved", .redirect(to: "/objects/a"))
        server.route("/objects/denied", LoopbackResponse(status: 403, body: .bytes(Data("<Error><Code>AccessDenied</Code></Error>".utf8))))
        let body = Data(repeating: 0xAB, count: 100_000)
        let answer = try await downloader.put(body, to: server.url("/objects/a"), headers: ["content-type": "image/webp"])
        #expect(answer.statusCode == 200 && answer.headers["etag"] == "\"1\"")
        let sent = try #require(server.requests.last)
        #expect(sent.method == "PUT" && sent.path == "/objects/a")
        #expect(sent.headers["content-length"] == "100000" && sent.headers["content-type"] == "image/webp")

        await #expect(throws: WebImageError.self) { try await downloader.put(body, to: server.url("/objects/moved")) }
        #expect(server.requests.filter { $0.path == "/objects/a" }.count == 1, "a PUT was redirected")
        await #expect(throws: WebImageError.httpStatus(403)) { try await downloader.put(body, to: server.url("/objects/denied")) }
        // A GET of the same origin still works on the connections the PUTs used.
        server.route("/a.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
        let token = downloader.download(ImageLoadRequest(url: server.url("/a.jpg")))
        for try await event in token.events { if case .completed(let data, _) = event { #expect(!data.isEmpty) } }
    }

    @Test func overHTTP1() async throws {
        let server = try await LoopbackServer.start()
        var configuration = ImageDownloaderConfiguration(timeout: .seconds(5))
        configuration.maxConnectionsPerHost = 1
        let downloader = ImageDownloader(configuration: configuration)
        try await check(server, downloader)
        try await downloader.shutdown()
        try await server.shutdown()
    }

    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
    func overHTTP2() async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let server = try await LoopbackServer.start(tls: tls, http2: true)
        var configuration = ImageDownloaderConfiguration(timeout: .seconds(5))
        configuration.trustedCertificatesPEM = [tls.certificatePEM]
        configuration.httpVersion = .http2
        let downloader = ImageDownloader(configuration: configuration)
        try await check(server, downloader)
        try await downloader.shutdown()
        try await server.shutdown()
    }
}
