#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a load delivers.
public struct ImageResult: Sendable {
    /// The image, decoded (and transformed).
    public var image: DecodedImage
    /// The original bytes, when they were at hand: always after a download, after a disk hit, and
    /// after a memory hit with ``ImageLoadOptions/queryMemoryDataToo``.
    public var data: Data?
    /// Where the image came from: ``ImageCacheType/none`` means it was loaded.
    public var cacheType: ImageCacheType
    /// The URL the bytes finally came from (after redirects; the requested URL for cache hits).
    public var url: URL
    /// The key the image is cached under, or `nil` when the load is not cached.
    public var cacheKey: String?
    /// The response, when the image was loaded.
    public var response: ImageLoadResponse?

    public init(image: DecodedImage, data: Data? = nil, cacheType: ImageCacheType, url: URL,
                cacheKey: String? = nil, response: ImageLoadResponse? = nil) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.url = url
        self.cacheKey = cacheKey
        self.response = response
    }
}

/// One thing an ``ImageTask`` reports.
public enum ImageTaskEvent: Sendable {
    /// Bytes arrived: how many so far, of how many if known.
    case progress(received: Int64, expected: Int64?)
    /// A partial image decoded from the data so far (``ImageLoadOptions/progressiveLoad``).
    case partialImage(DecodedImage)
    /// The cached image, delivered before revalidating it (``ImageLoadOptions/refreshCached``).
    case cachedImage(ImageResult)
    /// The final result: the last event of a successful load.
    case completed(ImageResult)
}
