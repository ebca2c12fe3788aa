import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import WebImageTestSupport

/// moto's S3 server on loopback, started for the test: buckets and objects put with boto3, read
/// by the library's and the service's `s3://BUCKET/KEY` loads through their endpoint setting.
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

    /// Creates `bucket` (if it is not there) and stores `objects` (key → bytes) in it with boto3.
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
        try:
            s3.create_bucket(Bucket=a["bucket"])
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        for key, path in a["files"].items():
            s3.put_object(Bucket=a["bucket"], Key=key, Body=open(path, "rb").read())
        """
        let run = try await ChildProcess.run(try #require(Botocore.python), ["-c", script, arguments])
        try #require(run.status == 0, "boto3: \(run.stderr)")
    }

    /// The keys in `bucket` under `prefix`, listed with boto3.
    func keys(bucket: String, prefix: String = "") async throws -> [String] {
        let script = """
        import sys, boto3
        s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[2], Prefix=sys.argv[3]):
            for item in page.get("Contents", []):
                print(item["Key"])
        """
        let run = try await ChildProcess.run(try #require(Botocore.python), ["-c", script, endpoint, bucket, prefix])
        try #require(run.status == 0, "boto3: \(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// SIGKILL: moto's server sits through SIGTERM, and holds nothing that needs a clean exit.
    func stop() async { await child.stop(signal: SIGKILL) }
}
