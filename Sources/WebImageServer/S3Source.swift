#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `s3://BUCKET/KEY` sources: the `GET` to send to an S3-compatible store, signed.
///
/// With `--s3-endpoint URL` the object is `URL/BUCKET/KEY` (path-style addressing, what MinIO,
/// Ceph and most compatible stores expect); without, AWS's regional virtual-host endpoint
/// `https://BUCKET.s3.REGION.amazonaws.com/KEY`. The request is signed with Signature Version 4
/// when credentials are set (``S3Credentials/environment(_:)``), else sent unsigned (public
/// buckets). The configured endpoint is trusted by the private-address guard for these reads
/// only: an `http://` source naming the endpoint is still guarded.
struct S3Source: Sendable {
    /// `--s3-endpoint`, if any.
    let endpoint: URL?
    let region: String
    let credentials: S3Credentials?

    /// The request for `url` (`s3://BUCKET/KEY`) at `date`.
    /// - Throws: ``ServiceError`` 400 for a malformed bucket or key.
    func request(for url: URL, date: Date = Date()) throws -> ImageLoadRequest {
        let bucket = (url.host(percentEncoded: true) ?? "").lowercased()
        guard (3...63).contains(bucket.count),
              bucket.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == ".") }),
              !bucket.hasPrefix("."), !bucket.hasSuffix("."), !bucket.contains("..") else {
            throw ServiceError.badParameter("'\(bucket)' is not an S3 bucket name")
        }
        guard url.user == nil, url.port == nil else { throw ServiceError.badParameter("an s3 URL is s3://BUCKET/KEY") }
        guard let bytes = try? DataURLLoader.percentDecodedBytes(String(url.path(percentEncoded: true).dropFirst())), !bytes.isEmpty else {
            throw ServiceError.badParameter("an s3 URL names an object: s3://BUCKET/KEY")
        }
        let key = S3RequestSigner.canonicalPath(Array(bytes))
        let text: String
        if let endpoint {
            let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
            text = "\(base)/\(bucket)/\(key)"
        } else {
            text = "https://\(bucket).s3.\(region).amazonaws.com/\(key)"
        }
        guard let target = URL(string: text) else { throw ServiceError.badParameter("the s3 URL cannot be addressed") }
        let headers = credentials.map { S3RequestSigner(credentials: $0, region: region).headers(forGET: target, date: date) } ?? [:]
        return ImageLoadRequest(url: target, headers: headers)
    }

    /// `HOST:PORT` of the endpoint, for the private-address guard's exemption.
    var endpointHost: String? {
        guard let endpoint, let host = endpoint.host(percentEncoded: true) else { return nil }
        let port = endpoint.port ?? (endpoint.scheme?.lowercased() == "https" ? 443 : 80)
        return host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
