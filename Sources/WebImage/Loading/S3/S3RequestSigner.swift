#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AWS Signature Version 4 for S3 requests (a `GET` without a body, a `PUT` with one), over the
/// library's SHA-256 and `HMACSHA256`: no AWS SDK.
///
/// The payload hash sent and signed is the SHA-256 of the body (of the empty body for a `GET`),
/// which every S3-compatible store accepts over http and https alike, where `UNSIGNED-PAYLOAD`
/// is refused by some over plain http.
package struct S3RequestSigner: Sendable {
    package let credentials: S3Configuration.Credentials
    package let region: String
    /// Always `s3` here; a parameter so the signer reads as the algorithm does.
    let service = "s3"

    package init(credentials: S3Configuration.Credentials, region: String) {
        self.credentials = credentials
        self.region = region
    }

    /// The SHA-256 of the empty body, hex.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to add to `method url` at `date`: `Authorization`, `x-amz-date`,
    /// `x-amz-content-sha256`, and `x-amz-security-token` with a session token. `url`'s path must
    /// already be in canonical form (``canonicalPath(_:)``): it is signed as it is sent; it has no query.
    /// `signing` are further headers (names lowercase) to sign, sent as given: a `PUT`'s
    /// `content-type` and `x-amz-meta-*`.
    package func headers(method: String = "GET", url: URL, payloadHash: String = emptyPayloadHash,
                         signing extra: [String: String] = [:], date: Date) -> [String: String] {
        let amzDate = Self.timestamp(date)
        let day = String(amzDate.prefix(8))
        var headers = extra
        headers["host"] = Self.hostHeader(url)
        headers["x-amz-date"] = amzDate
        headers["x-amz-content-sha256"] = payloadHash
        if let token = credentials.sessionToken { headers["x-amz-security-token"] = token }
        let names = headers.keys.sorted()
        let signedHeaders = names.joined(separator: ";")
        let canonicalRequest = [
            method,
            url.path(percentEncoded: true).isEmpty ? "/" : url.path(percentEncoded: true),
            "",  // The canonical query: S3 reads carry none.
            names.map { "\($0):\(headers[$0, default: ""].trimmingSpacesAndTabs)\n" }.joined(),
            signedHeaders,
            payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, SHA256.hex(of: Array(canonicalRequest.utf8))].joined(separator: "\n")
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] {
            key = HMACSHA256.authenticationCode(for: Array(part.utf8), key: key)
        }
        let signature = Hex.lowercase(HMACSHA256.authenticationCode(for: Array(stringToSign.utf8), key: key))
        headers["authorization"] = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        // The client sends its own Host header: it is signed, not added twice.
        headers["host"] = nil
        return headers
    }

    /// `Host` as a client sends it: the port only when it is not the scheme's default.
    package static func hostHeader(_ url: URL) -> String {
        let host = url.host(percentEncoded: true) ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = url.port else { return bracketed }
        let isDefault = (url.scheme == "https" && port == 443) || (url.scheme == "http" && port == 80)
        return isDefault ? bracketed : "\(bracketed):\(port)"
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC (``UTCDateTime``: no calendar or time-zone database), the
    /// fraction of a second dropped.
    package static func timestamp(_ date: Date) -> String {
        let time = UTCDateTime(secondsSince1970: Int(date.timeIntervalSince1970.rounded(.down)))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(time.year)\(two(time.month))\(two(time.day))T\(two(time.hour))\(two(time.minute))\(two(time.second))Z"
    }

    /// An object key as S3 signs it: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
    /// and `/` percent-encoded, uppercase hex.
    package static func canonicalPath(_ key: [UInt8]) -> String {
        var out = ""
        for byte in key {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += Hex.percentEncoded(byte)
            }
        }
        return out
    }
}
