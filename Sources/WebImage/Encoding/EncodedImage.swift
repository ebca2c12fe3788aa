#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image as bytes to send or save: what the manager's encode stage makes
/// (``ImageManager/encodedImage(for:)``) and its data tier keeps.
public struct EncodedImage: Sendable, Hashable {
    /// The encoded image.
    public var body: Data
    /// Its media type (`image/webp`).
    public var contentType: String
    /// A strong entity tag, quoted: equal tags, equal bytes.
    public var etag: String

    /// An encoded image.
    public init(body: Data, contentType: String, etag: String) {
        self.body = body
        self.contentType = contentType
        self.etag = etag
    }
}

extension ImageManager {
    /// What ``ImageManager/encodedImage(for:)`` answers: the bytes, and where they came from.
    public struct EncodedResult: Sendable {
        /// Where an encoded image came from.
        public enum Origin: String, Sendable, Hashable {
            /// The data tier's memory.
            case memory
            /// The data tier's disk.
            case disk
            /// The remote tier (``ImageDataCache/SharedStore``): another process made it.
            case remote
            /// Rendered for this request.
            case rendered
            /// Rendered for another request of the same output, which this one joined.
            case joined
        }

        /// The bytes.
        public var image: EncodedImage
        /// Where they came from.
        public var origin: Origin

        /// A result.
        public init(image: EncodedImage, origin: Origin) {
            self.image = image
            self.origin = origin
        }
    }
}
