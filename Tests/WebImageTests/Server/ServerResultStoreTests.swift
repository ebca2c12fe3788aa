import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--result-store s3://BUCKET/PREFIX` against moto's S3 server: what one instance renders,
/// another answers from the store without fetching or rendering; what is not a stored output
/// is a miss; a store that fails costs a render, never the answer.
@Suite("webimage serve: the result store", .enabled(if: MotoS3.available, "python3 with moto[server] and boto3 is not installed"),
       .serialized, .timeLimit(.minutes(2)))
struct ServerResultStoreTests {
    private func configure(_ moto: MotoS3, store: String = "s3://results/fleet/") -> (inout ServerConfiguration, LoopbackServer) -> Void {
        { configuration, _ in
            configuration.s3Endpoint = moto.endpoint
            configuration.s3Credentials = S3Credentials(accessKeyID: "testing", secretAccessKey: "testing")
            configuration.resultStore = store
        }
    }

    private func metrics(_ server: ServerHarness) async throws -> PrometheusText {
        let reply = try await ServerTestClient.send(port: server.port, "/metrics")
        return PrometheusText(String(decoding: reply.body, as: UTF8.self))
    }

    @Test func anotherInstanceAnswersFromTheStoreWithoutFetchingOrRendering() async throws {
        let moto = try await MotoS3.start()
        try await moto.put(bucket: "results", [:])
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let a = try await ServerHarness.start(origin: origin, configure(moto))
        let query = "url=\(a.source("/a.jpg"))&w=64&h=64&fit=cover&format=webp"
        let first = try await a.get(query)
        #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
        // Shutting down waits for the write behind the render.
        try await a.stop()
        let stored = try await moto.keys(bucket: "results", prefix: "fleet/")
        #expect(stored.count == 1 && stored.allSatisfy { $0.count == "fleet/".count + 64 }, "\(stored)")

        let b = try await ServerHarness.start(origin: origin, configure(moto, store: "s3://results/fleet"))
        let second = try await b.get(query)
        #expect(second.status == 200)
        #expect(second.body == first.body)
        #expect(second.header("Content-Type") == "image/webp")
        #expect(second.header("ETag") == first.header("ETag"))
        let counts = try await metrics(b)
        #expect(counts.sum("webimage_renders_total") == 0)
        #expect(counts.sum("webimage_source_fetches_total") == 0)
        #expect(counts.sum("webimage_cache_hits_total", matching: ["tier": "store"]) == 1)
        #expect(origin.requestCount(for: "/a.jpg") == 1, "the second instance fetched the source")
        // Now in its own cache: a repeat does not ask the store again.
        #expect(try await b.get(query).status == 200)
        #expect(try await metrics(b).sum("webimage_cache_hits_total", matching: ["tier": "memory"]) == 1)
        try await b.stop()
        try await origin.shutdown()
        await moto.stop()
    }

    @Test func instancesWithOtherLocalRootsDoNotShareOutputs() async throws {
        // `local:///photo.png` is another file under another `--local-root`: the key says which.
        let moto = try await MotoS3.start()
        try await moto.put(bucket: "results", [:])
        let red = try TemporaryDirectory(), blue = try TemporaryDirectory()
        func png(_ color: (UInt8, UInt8, UInt8, UInt8)) throws -> Data {
            try ImageCodersManager.shared.encode(DecodedImage(bitmap: try Bitmap(width: 8, height: 8, filledWith: color), hasAlpha: false),
                                                 format: .png, options: EncodeOptions())
        }
        try png((250, 0, 0, 255)).write(to: red.url.appendingPathComponent("photo.png"))
        try png((0, 0, 250, 255)).write(to: blue.url.appendingPathComponent("photo.png"))
        let query = "url=local%3A%2F%2F%2Fphoto.png&format=png"
        var outputs: [Data] = []
        for root in [red, blue] {
            let server = try await ServerHarness.start { configuration, origin in
                self.configure(moto)(&configuration, origin)
                configuration.localRoot = root.url.path
            }
            let reply = try await server.get(query)
            #expect(reply.status == 200)
            outputs.append(reply.body)
            try await server.stop()
        }
        let pixels = try outputs.map { try ServerTestImages.decode($0).bitmap.withUnsafeBytes { Array($0.prefix(4)) } }
        #expect(pixels == [[250, 0, 0, 255], [0, 0, 250, 255]], "the second root was answered with the first root's file")
        #expect(try await moto.keys(bucket: "results", prefix: "").count == 2)
        await moto.stop()
    }

    @Test func aForeignObjectIsAMissAndAFailingStoreCostsOnlyARender() async throws {
        let moto = try await MotoS3.start()
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        // No bucket yet: the lookup fails (404 NoSuchBucket) and so does the write; the answer does not.
        let a = try await ServerHarness.start(origin: origin, configure(moto))
        let query = "url=\(a.source("/a.jpg"))&w=48&format=png"
        let first = try await a.get(query)
        #expect(first.status == 200 && first.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        try await a.stop()

        // An object under the output's name that the service did not write (wrong type, no ETag):
        // rendered again, and the store's bytes never reach the client.
        try await moto.put(bucket: "results", [:])
        let b = try await ServerHarness.start(origin: origin, configure(moto))
        #expect(try await b.get(query).status == 200)
        try await b.stop()
        let keys = try await moto.keys(bucket: "results", prefix: "fleet/")
        try #require(keys.count == 1, "\(keys)")
        try await moto.put(bucket: "results", [keys[0]: Data("<html>not an image</html>".utf8)])
        let c = try await ServerHarness.start(origin: origin, configure(moto))
        let third = try await c.get(query)
        #expect(third.status == 200 && third.body == first.body)
        #expect(try await metrics(c).sum("webimage_renders_total") == 1)
        try await c.stop()
        try await origin.shutdown()
        await moto.stop()
    }

    @Test func theLocationMustBeAnS3BucketAndPrefix() async throws {
        for bad in ["http://results/x", "results/fleet", "s3://ab/x", "s3://bad_bucket/x", "s3://", "s3://results/x?y=1", "s3://results/../x"] {
            var configuration = ServerConfiguration()
            configuration.resultStore = bad
            #expect(throws: ServiceError.self, "\(bad)") { try configuration.validate() }
        }
        for good in ["s3://results", "s3://results/", "s3://results/fleet/2026"] {
            var configuration = ServerConfiguration()
            configuration.resultStore = good
            #expect(throws: Never.self, "\(good)") { try configuration.validate() }
        }
        let flags = try await ServerConfiguration.resolve(ServerConfiguration.Flags(), environment: ["WEBIMAGE_RESULT_STORE": "s3://results/env"])
        #expect(flags.resultStore == "s3://results/env")
        #expect(flags.summary.contains("result-store: s3://results/env"))
    }
}
