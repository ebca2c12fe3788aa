import Foundation
import Testing
@testable import WebImageServer

/// The Signature Version 4 signer checked byte for byte against botocore's (`S3SigV4Auth`) for the
/// same request, date and credentials; skipped, with the reason shown, where botocore is missing.
@Suite("webimage serve: S3 request signing", .enabled(if: Botocore.python != nil, "python3 with botocore is not installed"))
struct ServerS3SignerTests {
    private let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

    @Test func authorizationMatchesBotocore() async throws {
        let date = Date(timeIntervalSince1970: 1_795_858_200)  // 2026-11-28T09:30:00Z
        #expect(S3RequestSigner.timestamp(date) == "20261128T093000Z")
        // A leap day's last second, the epoch, a century that is a leap year, one that is not.
        for (seconds, text) in [(1_709_251_199.0, "20240229T235959Z"), (0, "19700101T000000Z"), (946_684_800, "20000101T000000Z"),
                                (4_102_444_800, "21000101T000000Z")] {
            #expect(S3RequestSigner.timestamp(Date(timeIntervalSince1970: seconds)) == text)
        }
        let token = "FwoGZXIvYXdzEJr//////////wEaDOPxHJ7Aexample+token/=="
        let cases: [(endpoint: String?, region: String, source: String, token: String?)] = [
            ("http://127.0.0.1:9000", "us-east-1", "s3://photos/a.jpg", nil),
            ("http://127.0.0.1:9000", "eu-west-1", "s3://photos/dir/with%20space/caf%C3%A9+1&(2)~x.jpg", nil),
            ("https://minio.example:8443/base", "us-east-1", "s3://my.bucket-1/k", token),
            (nil, "eu-central-1", "s3://photos/2026/11/a.png", token),
            (nil, "us-east-1", "s3://photos/%E2%9C%93/%2Fodd%25key", nil),
        ]
        for (endpoint, region, source, token) in cases {
            var credentials = credentials
            credentials.sessionToken = token
            let s3 = S3Source(endpoint: endpoint.flatMap(URL.init(string:)), region: region, credentials: credentials)
            let request = try s3.request(for: try #require(URL(string: source)), date: date)
            let ours = try #require(request.headers["authorization"])
            #expect(request.headers["x-amz-date"] == "20261128T093000Z")
            #expect(request.headers["x-amz-security-token"] == token)
            let theirs = try await Botocore.authorization(url: request.url.absoluteString, region: region, credentials: credentials,
                                                          timestamp: "20261128T093000Z")
            #expect(ours == theirs, "\(source) via \(endpoint ?? "AWS")")
        }
    }

    @Test func keysAndBucketsAreAddressedAsS3Expects() throws {
        let path = S3Source(endpoint: URL(string: "http://127.0.0.1:9000/"), region: "us-east-1", credentials: nil)
        #expect(try path.request(for: URL(string: "s3://photos/a%20b/c+d.jpg")!).url.absoluteString == "http://127.0.0.1:9000/photos/a%20b/c%2Bd.jpg")
        #expect(try path.request(for: URL(string: "s3://photos/a.jpg")!).headers.isEmpty, "no credentials: unsigned")
        let aws = S3Source(endpoint: nil, region: "eu-west-1", credentials: nil)
        #expect(try aws.request(for: URL(string: "s3://photos/a.jpg")!).url.absoluteString == "https://photos.s3.eu-west-1.amazonaws.com/a.jpg")
        for bad in ["s3://ab/a.jpg", "s3://Bad_Bucket/a.jpg", "s3://photos/", "s3://photos", "s3://a..b/k", "s3://user@photos/k"] {
            #expect(throws: ServiceError.self, "\(bad)") { try path.request(for: URL(string: bad)!) }
        }
        #expect(path.endpointHost == "127.0.0.1:9000")
        #expect(S3Source(endpoint: URL(string: "https://s3.internal"), region: "x", credentials: nil).endpointHost == "s3.internal:443")
    }
}

/// botocore, run as `python3` finds it.
enum Botocore {
    /// `python3`'s path when it imports botocore.
    static let python: String? = {
        guard let run = try? ChildProcess.runBlocking("/usr/bin/env", ["python3", "-c", "import botocore, sys; print(sys.executable)"]),
              run.status == 0 else { return nil }
        return String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    static let script = """
    import sys, json
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    a = json.loads(sys.argv[1])
    request = AWSRequest(method="GET", url=a["url"], headers={})
    request.context["timestamp"] = a["timestamp"]
    request.headers["X-Amz-Date"] = a["timestamp"]
    request.headers["X-Amz-Content-SHA256"] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    if a.get("token"):
        request.headers["X-Amz-Security-Token"] = a["token"]
    auth = S3SigV4Auth(Credentials(a["key"], a["secret"], a.get("token")), "s3", a["region"])
    canonical = auth.canonical_request(request)
    signature = auth.signature(auth.string_to_sign(request, canonical), request)
    print("AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=%s" % (
        auth.scope(request), auth.signed_headers(auth.headers_to_sign(request)), signature))
    """

    /// botocore's `Authorization` for `GET url`.
    static func authorization(url: String, region: String, credentials: S3Credentials, timestamp: String) async throws -> String {
        var arguments: [String: String] = ["url": url, "region": region, "timestamp": timestamp,
                                           "key": credentials.accessKeyID, "secret": credentials.secretAccessKey]
        arguments["token"] = credentials.sessionToken
        let json = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        let run = try await ChildProcess.run(try #require(python), ["-c", script, json])
        try #require(run.status == 0, "botocore: \(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
