#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The headers and bodies the service answers with, framework-neutral (``ServiceResponse``).
enum ImageResponses {
    /// 200 with the body, or 304 when `ifNoneMatch` names its ETag. `Vary: Accept` when the
    /// format was negotiated.
    static func image(_ image: EncodedImage, ifNoneMatch: String?, negotiated: Bool, maxAge: Int) -> ServiceResponse {
        var headers: [(name: String, value: String)] = [("Cache-Control", "public, max-age=\(maxAge)"), ("ETag", image.etag)]
        if negotiated { headers.append(("Vary", "Accept")) }
        if let ifNoneMatch, matches(ifNoneMatch, etag: image.etag) {
            return ServiceResponse(status: 304, headers: headers)
        }
        headers.append(("Content-Type", image.contentType))
        return ServiceResponse(status: 200, headers: headers, body: image.body)
    }

    /// A JSON body (`/info`), not stored by shared caches longer than `maxAge`.
    static func json(_ body: Data, maxAge: Int) -> ServiceResponse {
        ServiceResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=\(maxAge)")],
                        body: body)
    }

    /// `{"error": {"code", "message"}}` with the error's status; 503 carries `Retry-After`.
    static func error(_ error: ServiceError) -> ServiceResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json"), ("Cache-Control", "no-store")]
        if error.status == 503 { headers.append(("Retry-After", "1")) }
        return ServiceResponse(status: error.status, headers: headers, body: error.jsonBody)
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
