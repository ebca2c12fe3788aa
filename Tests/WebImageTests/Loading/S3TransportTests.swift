import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `s3://` requests go over connections of their own, apart from the downloader's other HTTP
/// loads, because their trust differs: the configured endpoint is connected to past the
/// connect-address policy (the operator named it), and no redirect is followed. An http URL to
/// the same endpoint is still guarded, before and after an S3 read opened a connection there.
@Suite("S3 transport: the endpoint's own trust", .timeLimit(.minutes(1)))
struct S3TransportTests {
    @Test func theEndpointIsTrustedForS3ReadsOnlyAndNoRedirectIsFollowed() async throws {
        try await withServer(.http1) { endpoint in
            endpoint.route("/photos/a.png", .image(testBytes(10), contentType: "image/png"))
            endpoint.route("/photos/hop", .redirect(to: endpoint.url("/photos/a.png").absoluteString))
            // A guard that refuses every address: loopback is private.
            var configuration = ImageDownloaderConfiguration(connectAddressPolicy: { _, _, _ in false })
            configuration.s3 = S3Configuration(endpoint: endpoint.baseURL)
            let downloader = ImageDownloader(configuration: configuration)

            let read = await collect(downloader.load(ImageLoadRequest(url: URL(string: "s3://photos/a.png")!)))
            #expect(read.data?.count == 10, "\(String(describing: read.error))")
            #expect(endpoint.requestCount(for: "/photos/a.png") == 1)

            // The same origin as a plain http source: guarded, with the S3 read's connection idle in its pool.
            let direct = await collect(downloader.load(ImageLoadRequest(url: endpoint.url("/photos/a.png"))))
            #expect(direct.error?.code == "rejected", "\(String(describing: direct.error))")
            #expect(endpoint.requestCount(for: "/photos/a.png") == 1)

            // A signature is for one URL: the store's redirect is not followed.
            let hop = await collect(downloader.load(ImageLoadRequest(url: URL(string: "s3://photos/hop")!)))
            #expect(hop.error != nil && hop.data == nil)
            #expect(endpoint.requestCount(for: "/photos/hop") == 1)
            #expect(endpoint.requestCount(for: "/photos/a.png") == 1)
            try await downloader.shutdown()
        }
    }
}
