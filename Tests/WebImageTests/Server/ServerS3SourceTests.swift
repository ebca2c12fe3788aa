import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// moto's S3 server on loopback, started for the test: a bucket, a photo, and the service
/// reading `s3://BUCKET/KEY` from it through `--s3-endpoint`.
final class MotoS3: Sendable {
    let child: WatchedProcess
    let port: Int
    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Whether `python3 -m moto.server` can run here (the suites that need it are skipped, with
    /// the reason shown, where it cannot).
    static let available: Bool = Botocore.python != nil
        && (try? ChildProcess.runBlocking("/usr/bin/env", ["python3", "-c", "import moto.server, boto3, flask"]).status) == 0

    /// Starts moto; with `authenticatedAfter`, requests after that many are checked against its
    /// IAM (unknown keys refused), as an AWS account's would be.
    static func start(authenticatedAfter: Int? = nil) async throws -> MotoS3 {
        let port = try ExternalTool.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = "testing"
        environment["AWS_SECRET_ACCESS_KEY"] = "testing"
        if let authenticatedAfter { environment["INITIAL_NO_AUTH_ACTION_COUNT"] = String(authenticatedAfter) }
        let child = try await WatchedProcess.start(URL(fileURLWithPath: "/usr/bin/env"),
                                                   ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)],
                                                   environment: environment, watching: .both) { $0.contains("Running on") ? "" : nil }
        return MotoS3(child: child, port: port)
    }

    private init(child: WatchedProcess, port: Int) {
        self.child = child
        self.port = port
    }

    /// Creates `bucket` and stores `objects` (key → bytes) in it with boto3.
    func put(bucket: String, _ objects: [String: Data]) async throws {
        let directory = try TemporaryDirectory()
        var files: [String: String] = [:]
        for (index, (key, data)) in objects.enumerated() {
            let file = directory.url.appendingPathComponent("\(index)")
            try data.write(to: file)
            files[key] = file.path
        }
        let arguments = String(decoding: try JSONSerialization.data(withJSONObject: ["endpoint": endpoint, "bucket": bucket, "files": files]),
                               as: UTF8.self)
        let script = """
        import sys, json, boto3
        a = json.loads(sys.argv[1])
        s3 = boto3.client("s3", endpoint_url=a["endpoint"], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket=a["bucket"])
        for key, path in a["files"].items():
            s3.put_object(Bucket=a["bucket"], Key=key, Body=open(path, "rb").read())
        """
        let run = try await ChildProcess.run(try #require(Botocore.python), ["-c", script, arguments])
        try #require(run.status == 0, "boto3: \(run.stderr)")
    }

    /// SIGKILL: moto's server sits through SIGTERM, and holds nothing that needs a clean exit.
    func stop() async { await child.stop(signal: SIGKILL) }
}

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
