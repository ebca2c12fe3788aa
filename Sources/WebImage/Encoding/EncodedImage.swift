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

    /// Whether a type and an ETag read back from a store (a disk entry, a shared store's object)
    /// may be sent as headers: a media type and a quoted tag of visible ASCII, short. A cache
    /// directory or a bucket may hold anything: a line break there must not reach a response.
    public static func isSendable(contentType: String, etag: String) -> Bool {
        let type = contentType.utf8, tag = etag.utf8
        return (3...100).contains(type.count) && type.contains(UInt8(ascii: "/")) && type.allSatisfy { (0x21...0x7E).contains($0) }
            && (3...128).contains(tag.count) && tag.first == UInt8(ascii: "\"") && tag.last == UInt8(ascii: "\"")
            && tag.dropFirst().dropLast().allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") }
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
