#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where `s3://BUCKET/KEY` URLs are read from, and what their requests are signed with
/// (``ImageDownloaderConfiguration/s3``).
///
/// With an ``endpoint`` the object is `ENDPOINT/BUCKET/KEY` (path-style addressing, what MinIO,
/// Ceph and most compatible stores expect); without, AWS's regional virtual-host endpoint
/// `https://BUCKET.s3.REGION.amazonaws.com/KEY`. Requests are signed with AWS Signature
/// Version 4 when ``credentials`` are set, else sent unsigned (public buckets). A request is
/// signed when it is sent, not when it is queued: a signature is valid for 15 minutes.
public struct S3Configuration: Sendable, Equatable {
    /// An S3-compatible store's base URL (`http://minio:9000`); `nil`: AWS.
    public var endpoint: URL?
    /// The region requests are signed for (and, on AWS, addressed to).
    public var region: String
    /// The credentials requests are signed with; `nil`: unsigned.
    public var credentials: Credentials?

    /// A configuration from its parts.
    public init(endpoint: URL? = nil, region: String = "us-east-1", credentials: Credentials? = nil) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
    }

    /// What the AWS tools read: `AWS_ENDPOINT_URL_S3` (else `AWS_ENDPOINT_URL`), `AWS_REGION`
    /// (else `AWS_DEFAULT_REGION`, else `us-east-1`) and ``Credentials/environment(_:)``.
    public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Configuration {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        return S3Configuration(endpoint: (value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL")).flatMap(URL.init(string:)),
                               region: value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1",
                               credentials: Credentials.environment(environment))
    }

    /// Whether `url` is an `s3://` URL.
    public static func isS3(_ url: URL) -> Bool { url.scheme?.lowercased() == "s3" }

    /// The bucket and the key's raw bytes of `url` (`s3://BUCKET/KEY`).
    /// - Throws: ``WebImageError/invalidURL(_:)`` for a malformed bucket or key.
    package static func object(of url: URL) throws(WebImageError) -> (bucket: String, key: [UInt8]) {
        let bucket = (url.host(percentEncoded: true) ?? "").lowercased()
        guard (3...63).contains(bucket.count),
              bucket.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == ".") }),
              !bucket.hasPrefix("."), !bucket.hasSuffix("."), !bucket.contains("..") else {
            throw .invalidURL("'\(bucket)' is not an S3 bucket name")
        }
        guard url.user == nil, url.port == nil, url.query == nil else { throw .invalidURL("an s3 URL is s3://BUCKET/KEY") }
        guard let key = try? DataURLLoader.percentDecodedBytes(String(url.path(percentEncoded: true).dropFirst())), !key.isEmpty else {
            throw .invalidURL("an s3 URL names an object: s3://BUCKET/KEY")
        }
        // Path-style, `ENDPOINT/photos/../other/k` is another bucket's object to any server or
        // proxy that normalizes the path: keys with such segments are not addressed at all.
        guard !key.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .contains(where: { $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) }) else {
            throw .invalidURL("an s3 key with a '.' or '..' segment is not addressed")
        }
        return (bucket, Array(key))
    }

    /// The http(s) URL that addresses the object `url` (`s3://BUCKET/KEY`) names, its path in
    /// S3's canonical form (signed as it is sent).
    /// - Throws: ``WebImageError/invalidURL(_:)`` for a malformed bucket or key.
    package func objectURL(for url: URL) throws(WebImageError) -> URL {
        let (bucket, key) = try Self.object(of: url)
        let path = S3RequestSigner.canonicalPath(key)
        let text: String
        if let endpoint {
            let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
            text = "\(base)/\(bucket)/\(path)"
        } else {
            text = "https://\(bucket).s3.\(region).amazonaws.com/\(path)"
        }
        guard let target = URL(string: text) else { throw .invalidURL("the s3 URL cannot be addressed: \(url.absoluteString)") }
        return target
    }

    /// `request` (for an `s3://` URL) as it goes to the store at `date`: addressed, and signed
    /// when there are credentials. `signing` are further headers to send and sign (a `PUT`'s).
    package func signed(_ request: ImageLoadRequest, method: String = "GET", payloadHash: String = S3RequestSigner.emptyPayloadHash,
                        signing extra: [String: String] = [:], date: Date = Date()) throws(WebImageError) -> ImageLoadRequest {
        var signed = request
        signed.url = try objectURL(for: request.url)
        for (name, value) in extra { signed.headers[name] = value }
        if let credentials {
            let headers = S3RequestSigner(credentials: credentials, region: region)
                .headers(method: method, url: signed.url, payloadHash: payloadHash, signing: extra, date: date)
            for (name, value) in headers { signed.headers[name] = value }
        }
        return signed
    }
}
