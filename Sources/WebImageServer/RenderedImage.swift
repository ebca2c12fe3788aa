#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One response body `GET /image` can send: the encoded bytes, their type and their ETag.
public struct RenderedImage: Sendable {
    /// The encoded image.
    public var body: Data
    /// The `Content-Type`.
    public var contentType: String
    /// The strong `ETag`, quoted.
    public var etag: String
}
