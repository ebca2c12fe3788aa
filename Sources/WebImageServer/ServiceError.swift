#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// A failure the service reports to its client as `{"error": {"code": ..., "message": ...}}`.
public struct ServiceError: Error, Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// A stable machine-readable name.
    public var code: String
    /// A sentence for people.
    public var message: String

    /// Creates an error.
    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// 400: a parameter is missing, unknown or malformed.
    public static func badParameter(_ message: String) -> ServiceError { .init(status: 400, code: "badParameter", message: message) }
    /// 403: the signature is missing or wrong.
    public static func badSignature(_ message: String) -> ServiceError { .init(status: 403, code: "badSignature", message: message) }
    /// 403: the SSRF guard refused the source (or a redirect hop).
    public static func sourceNotAllowed(_ message: String) -> ServiceError { .init(status: 403, code: "sourceNotAllowed", message: message) }
    /// 404: no such endpoint.
    public static func notFound(_ message: String) -> ServiceError { .init(status: 404, code: "notFound", message: message) }
    /// 503: over `--concurrency`; `Retry-After` says when to come back.
    public static let overloaded = ServiceError(status: 503, code: "overloaded", message: "too many requests in progress; retry later")

    /// How a failure of the source fetch, decode or encode is reported.
    public static func from(_ error: any Error) -> ServiceError {
        if let error = error as? ServiceError { return error }
        guard let error = error as? WebImageError else {
            return ServiceError(status: 500, code: "internal", message: String(describing: error))
        }
        let message = error.description
        switch error {
        case .httpStatus(404), .httpStatus(410):
            return ServiceError(status: 404, code: "sourceNotFound", message: "the source answered \(message)")
        case .httpStatus:
            return ServiceError(status: 502, code: "sourceFailed", message: "the source answered \(message)")
        case .timedOut:
            return ServiceError(status: 504, code: "sourceTimedOut", message: "the source timed out")
        case .rejected, .insecureRedirect:
            return ServiceError(status: 403, code: "sourceNotAllowed", message: message)
        case .tooLarge:
            return ServiceError(status: 413, code: "sourceTooLarge", message: message)
        case .unsupportedFormat, .corruptData, .emptyData:
            return ServiceError(status: 415, code: "unsupportedSource", message: message)
        case .invalidURL, .invalidRequest:
            return ServiceError(status: 400, code: "badParameter", message: message)
        case .encodingFailed:
            return ServiceError(status: 500, code: "encodingFailed", message: message)
        case .cancelled:
            return ServiceError(status: 503, code: "cancelled", message: message)
        case .overloaded:
            return .overloaded
        case .deadlineExceeded(let limit):
            return ServiceError(status: 503, code: "renderTimedOut", message: "the render took longer than \(limit) (--render-timeout)")
        default:
            // Connection failures, resets, TLS, truncated bodies, redirect loops.
            return ServiceError(status: 502, code: "sourceFailed", message: message)
        }
    }

    /// How a failure to read or render a source's bytes is reported: the whole body arrived, so
    /// an image that ends early is a broken image (415), not a broken fetch (502); else as ``from(_:)``.
    static func fromSourceBytes(_ error: any Error) -> ServiceError {
        if case WebImageError.truncatedData(let reason) = error {
            return ServiceError(status: 415, code: "unsupportedSource", message: "truncated image: \(reason)")
        }
        return from(error)
    }

    /// The JSON body: `{"error": {"code": ..., "message": ...}}`.
    public var jsonBody: Data {
        struct Body: Encodable {
            struct Detail: Encodable { var code: String; var message: String }
            var error: Detail
        }
        return JSONWriter.data(Body(error: .init(code: code, message: message))) ?? Data("{\"error\":{\"code\":\"internal\",\"message\":\"\"}}".utf8)
    }
}
