#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Instrumentation

/// A request as any HTTP framework can hand it to ``WebImageService/respond(to:logger:)``: the method,
/// the path below where the service is mounted (`/image`, `/info`), the raw query as sent (the
/// signature covers it byte for byte), and the headers the service reads (`Accept`,
/// `If-None-Match`, `traceparent`...).
public struct ServiceRequest: Sendable {
    /// `GET` or `HEAD` (anything else is 405).
    public var method: String
    /// The path below the mount point, starting with `/`.
    public var path: String
    /// The query as sent, still percent-encoded, without the `?`.
    public var query: String
    /// The request headers; names are compared case-insensitively.
    public var headers: [(name: String, value: String)]

    /// A request from its parts.
    public init(method: String = "GET", path: String, query: String, headers: [(name: String, value: String)] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// The first value of `name`, if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Reads a trace context (`traceparent`...) from a request's headers for the tracer.
    struct HeaderExtractor: Extractor {
        func extract(key: String, from carrier: ServiceRequest) -> String? { carrier.header(key) }
    }
}

/// What ``WebImageService/respond(to:logger:)`` answers: status, headers and body, for the framework to send.
public struct ServiceResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, in order.
    public var headers: [(name: String, value: String)]
    /// The body (empty for a `HEAD`, a 304, and the headers-only answers).
    public var body: Data

    /// A response from its parts.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of `name`, if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
