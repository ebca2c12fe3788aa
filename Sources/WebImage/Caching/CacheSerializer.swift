#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns what a load produced into the bytes the disk cache stores.
public protocol CacheSerializer: Sendable {
    /// The bytes to store for `image`; `original` is what the loader delivered, if anything.
    /// Returning `nil` skips the disk store.
    func data(for image: DecodedImage, original: Data?, coders: ImageCodersManager) -> Data?
}

/// Keeps the original bytes when there are any; otherwise encodes PNG when the image has alpha
/// and JPEG (quality 0.9) when it does not.
public struct DefaultCacheSerializer: CacheSerializer {
    /// Creates the serializer.
    public init() {}

    public func data(for image: DecodedImage, original: Data?, coders: ImageCodersManager) -> Data? {
        if let original, !original.isEmpty { return original }
        let format: ImageFormat = image.hasAlpha ? .png : .jpeg
        return try? coders.encode(image, format: format, options: EncodeOptions(quality: 0.9))
    }
}
