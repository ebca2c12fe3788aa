import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

@Suite("webimage serve: S3 sources", .enabled(if: MotoS3.available, "python3 with moto[server] and boto3 is not installed"),
       .serialized, .timeLimit(.minutes(2)))
struct ServerS3SourceTests {
    private func query(_ url: String) -> String {
        "url=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&w=20&format=png"
    }

    @Test func objectsAreServedAMissingOneIs404() async throws {
        let moto = try await MotoS3.start()
        try await moto.put(bucket: "photos", ["2026/a photo.jpg": ServerTestImages.photo, "other.jpg": ServerTestImages.photo])
        let server = try await ServerHarness.start { configuration, _ in
            configuration.s3Endpoint = moto.endpoint
            configuration.s3Credentials = S3Credentials(accessKeyID: "testing", secretAccessKey: "testing")
            // The endpoint is listed too, so that only the private-address guard stands in its way.
            configuration.allowedSourcePrefixes = ["s3://photos/2026/", moto.endpoint + "/"]
        }
        let reply = try await server.get(query("s3://photos/2026/a%20photo.jpg"))
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(try ServerTestImages.decode(reply.body).width == 20)
        let missing = try await server.get(query("s3://photos/2026/missing.jpg"))
        #expect(missing.status == 404 && missing.errorCode == "sourceNotFound")
        // Off the list: refused before any request to the store.
        let off = try await server.get(query("s3://photos/other.jpg"))
        #expect(off.status == 403 && off.errorCode == "sourceNotAllowed")
        // Out of the listed prefix, and out of the bucket, by dot segments (plain and encoded),
        // which a path-style endpoint would resolve to another bucket's object.
        try await moto.put(bucket: "secret", ["k.jpg": ServerTestImages.photo])
        for escape in ["s3://photos/2026/../../secret/k.jpg", "s3://photos/2026/%2E%2E/%2E%2E/secret/k.jpg", "s3://photos/2026/./x/../a%20photo.jpg"] {
            let reply = try await server.get(query(escape))
            #expect([400, 403].contains(reply.status), "\(escape): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        // The endpoint is trusted for S3 reads only: as an http source it is still a private address.
        let direct = try await server.get(query(moto.endpoint + "/photos/other.jpg"))
        #expect(direct.status == 403 && direct.errorCode == "sourceNotAllowed")
        try await server.stop()
        await moto.stop()
    }

    @Test func aRefusedReadIs502WithTheReason() async throws {
        // Two requests (the bucket, the object) before moto checks keys against its IAM.
        let moto = try await MotoS3.start(authenticatedAfter: 2)
        try await moto.put(bucket: "photos", ["a.jpg": ServerTestImages.photo])
        let server = try await ServerHarness.start { configuration, _ in
            configuration.s3Endpoint = moto.endpoint
            configuration.s3Credentials = S3Credentials(accessKeyID: "AKIAUNKNOWN", secretAccessKey: "wrong")
        }
        let reply = try await server.get(query("s3://photos/a.jpg"))
        #expect(reply.status == 502 && reply.errorCode == "sourceFailed")
        #expect(String(decoding: reply.body, as: UTF8.self).contains("AccessDenied"))
        try await server.stop()
        await moto.stop()
    }
}
