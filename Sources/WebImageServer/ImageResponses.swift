#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import NIOCore

/// The headers and bodies `GET /image` answers with.
enum ImageResponses {
    static let retryAfter = HTTPField.Name("Retry-After")!
    static let requestID = HTTPField.Name("X-Request-Id")!

    /// 200 with the body, or 304 when `ifNoneMatch` names its ETag. `Vary: Accept` when the
    /// format was negotiated.
    static func image(_ image: RenderedImage, ifNoneMatch: String?, negotiated: Bool, maxAge: Int) -> Response {
        var headers = HTTPFields()
        headers[.cacheControl] = "public, max-age=\(maxAge)"
        headers[.eTag] = image.etag
        if negotiated { headers[.vary] = "Accept" }
        if let ifNoneMatch, matches(ifNoneMatch, etag: image.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = image.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.body)))
    }

    /// `{"error": {"code", "message"}}` with the error's status; 503 carries `Retry-After`.
    static func error(_ error: ServiceError) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        if error.status == 503 { headers[retryAfter] = "1" }
        return Response(status: HTTPResponse.Status(code: error.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: error.jsonBody)))
    }

    /// Whether an `If-None-Match` value names `etag` (weak comparison, as RFC 9110 asks for it).
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingSpacesAndTabs
            if tag == "*" { return true }
            return (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == wanted
        }
    }
}
