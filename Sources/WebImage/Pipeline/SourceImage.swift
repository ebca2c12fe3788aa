#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A source as its origin sent it: the bytes, with the `ETag`, `Last-Modified` and `Content-Type`
/// they came with. The manager's encoded loads keep it in the data tier (``ImageDataCache``)
/// under the source's cache key, so every output of one source is rendered from one fetch, and
/// an output rendered from a kept copy carries the same identity (``validators``) as one
/// rendered from a fresh fetch.
public struct SourceImage: Sendable {
    /// The body.
    public let data: Data
    /// The response's validators and type, as the disk cache stores them.
    public let metadata: ImageCacheMetadata
    /// The source's identity for the outputs' ETag: its strong ETag, else its Last-Modified with
    /// its length, else a hash of its bytes. The hash is made on first use, which is a render's,
    /// on a thread of the CPU budget rather than a cooperative one,
    /// and once for every variant rendered from this copy.
    public var validators: String { identity.value(hashing: data) }
    private let identity: Identity

    public init(data: Data, metadata: ImageCacheMetadata) {
        self.data = data
        self.metadata = metadata
        if let etag = metadata.etag, !etag.hasPrefix("W/") {
            identity = Identity("etag:" + etag)
        } else if let modified = metadata.lastModified {
            identity = Identity("modified:" + modified + ",length:\(data.count)")
        } else {
            identity = Identity(nil)
        }
    }

    /// The validators, or the hash once it is made (the lock makes the one write safe to share).
    private final class Identity: Sendable {
        private let known: Locked<String?>

        init(_ validators: String?) { known = Locked(validators) }

        func value(hashing data: Data) -> String {
            known.withLock { known in
                if let known { return known }
                let hashed = "sha256:" + SHA256.hex(of: data)
                known = hashed
                return hashed
            }
        }
    }

    /// The body of `response` from `url`.
    public init(data: Data, response: ImageLoadResponse, url: URL) {
        self.init(data: data, metadata: ImageCacheMetadata(originalURL: url.absoluteString, contentType: response.mimeType,
                                                           etag: response.headers["etag"], lastModified: response.headers["last-modified"]))
    }

    /// Whether the origin forbade keeping the response (`Cache-Control: no-store`).
    public static func mayStore(_ response: ImageLoadResponse) -> Bool {
        guard let cacheControl = response.headers["cache-control"] else { return true }
        return !cacheControl.split(separator: ",").contains {
            $0.trimmingSpacesAndTabs.lowercased() == "no-store"
        }
    }
}
