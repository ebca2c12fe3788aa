import Foundation
import Testing
@testable import WebImage

/// The Signature Version 4 signer checked byte for byte against botocore's (`S3SigV4Auth`) for the
/// same request, date and credentials; skipped, with the reason shown, where botocore is missing.
@Suite("S3 request signing", .enabled(if: Botocore.python != nil, "python3 with botocore is not installed"))
struct S3RequestSignerTests {
    private let credentials = S3Configuration.Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

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
            let s3 = S3Configuration(endpoint: endpoint.flatMap(URL.init(string:)), region: region, credentials: credentials)
            let request = try s3.signed(ImageLoadRequest(url: try #require(URL(string: source))), date: date)
            let ours = try #require(request.headers["authorization"])
            #expect(request.headers["x-amz-date"] == "20261128T093000Z")
            #expect(request.headers["x-amz-security-token"] == token)
            let theirs = try await Botocore.authorization(url: request.url.absoluteString, region: region, credentials: credentials,
                                                          timestamp: "20261128T093000Z")
            #expect(ours == theirs, "\(source) via \(endpoint ?? "AWS")")
        }
    }

    /// A result store's write: a `PUT` signed over its body's hash, with its type and metadata signed too.
    @Test func aPutMatchesBotocore() async throws {
        let date = Date(timeIntervalSince1970: 1_795_858_200)
        let body = Data("not really a JPEG".utf8)
        let extra = ["content-type": "image/jpeg", "x-amz-meta-webimage-etag": "\"abc123\""]
        for token in [nil, "FwoGZXIvYXdzEJr//////////wEaDOPxHJ7Aexample+token/=="] {
            var credentials = credentials
            credentials.sessionToken = token
            let s3 = S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000"), region: "eu-west-1", credentials: credentials)
            let request = try s3.signed(ImageLoadRequest(url: try #require(URL(string: "s3://results/fleet/0a1b"))), method: "PUT",
                                        payloadHash: SHA256.hex(of: body), signing: extra, date: date)
            #expect(request.headers["content-type"] == "image/jpeg")
            #expect(request.headers["x-amz-content-sha256"] == SHA256.hex(of: body))
            let theirs = try await Botocore.authorization(url: request.url.absoluteString, region: "eu-west-1", credentials: credentials,
                                                          timestamp: "20261128T093000Z", method: "PUT",
                                                          payloadHash: SHA256.hex(of: body), headers: extra)
            #expect(request.headers["authorization"] == theirs)
        }
    }

    @Test func keysAndBucketsAreAddressedAsS3Expects() throws {
        let path = S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000/"), region: "us-east-1", credentials: nil)
        func request(_ s3: S3Configuration, _ url: String) throws -> ImageLoadRequest {
            try s3.signed(ImageLoadRequest(url: try #require(URL(string: url))))
        }
        #expect(try request(path, "s3://photos/a%20b/c+d.jpg").url.absoluteString == "http://127.0.0.1:9000/photos/a%20b/c%2Bd.jpg")
        #expect(try request(path, "s3://photos/a.jpg").headers.isEmpty, "no credentials: unsigned")
        let aws = S3Configuration(endpoint: nil, region: "eu-west-1", credentials: nil)
        #expect(try request(aws, "s3://photos/a.jpg").url.absoluteString == "https://photos.s3.eu-west-1.amazonaws.com/a.jpg")
        for bad in ["s3://ab/a.jpg", "s3://Bad_Bucket/a.jpg", "s3://photos/", "s3://photos", "s3://a..b/k", "s3://user@photos/k",
                    "s3://photos/k?x=1", "s3://photos/../other/k", "s3://photos/a/%2E%2E/k", "s3://photos/./k", "s3://photos/a/.."] {
            #expect(throws: WebImageError.self, "\(bad)") { try request(path, bad) }
        }
        // What the AWS tools read.
        let environment = S3Configuration.environment(["AWS_ENDPOINT_URL_S3": "http://minio:9000", "AWS_DEFAULT_REGION": "eu-north-1",
                                                       "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"])
        #expect(environment == S3Configuration(endpoint: URL(string: "http://minio:9000"), region: "eu-north-1",
                                               credentials: S3Configuration.Credentials(accessKeyID: "k", secretAccessKey: "s")))
        #expect(S3Configuration.environment([:]) == S3Configuration())
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
    request = AWSRequest(method=a["method"], url=a["url"], headers=dict(a["headers"]))
    request.context["timestamp"] = a["timestamp"]
    request.headers["X-Amz-Date"] = a["timestamp"]
    request.headers["X-Amz-Content-SHA256"] = a["payloadHash"]
    if a.get("token"):
        request.headers["X-Amz-Security-Token"] = a["token"]
    auth = S3SigV4Auth(Credentials(a["key"], a["secret"], a.get("token")), "s3", a["region"])
    canonical = auth.canonical_request(request)
    signature = auth.signature(auth.string_to_sign(request, canonical), request)
    print("AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=%s" % (
        auth.scope(request), auth.signed_headers(auth.headers_to_sign(request)), signature))
    """

    /// botocore's `Authorization` for `method url` with `headers` (signed too).
    static func authorization(url: String, region: String, credentials: S3Configuration.Credentials, timestamp: String, method: String = "GET",
                              payloadHash: String = S3RequestSigner.emptyPayloadHash,
                              headers: [String: String] = [:]) async throws -> String {
        var arguments: [String: Any] = ["url": url, "region": region, "timestamp": timestamp, "method": method,
                                        "payloadHash": payloadHash, "headers": headers,
                                        "key": credentials.accessKeyID, "secret": credentials.secretAccessKey]
        arguments["token"] = credentials.sessionToken
        let json = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        let run = try await ChildProcess.run(try #require(python), ["-c", script, json])
        try #require(run.status == 0, "botocore: \(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
