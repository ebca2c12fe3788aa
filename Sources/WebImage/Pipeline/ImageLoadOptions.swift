/// How one load behaves: SDWebImage's options, by the same names.
///
/// Options that only a view binding acts on (``delayPlaceholder``, ``avoidAutoSetImage``) are
/// carried through the manager untouched.
public struct ImageLoadOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Load a URL even if it is on the failed-URL list (and take it off the list when it succeeds).
    public static let retryFailed = ImageLoadOptions(rawValue: 1 << 0)
    /// Download at low priority (prefetching uses this).
    public static let lowPriority = ImageLoadOptions(rawValue: 1 << 1)
    /// Download at high priority: jumps the downloader's queue.
    public static let highPriority = ImageLoadOptions(rawValue: 1 << 2)
    /// Store in memory only, never on disk.
    public static let cacheMemoryOnly = ImageLoadOptions(rawValue: 1 << 3)
    /// Deliver partial images while the data arrives (when the coder can decode incrementally).
    public static let progressiveLoad = ImageLoadOptions(rawValue: 1 << 4)
    /// Deliver the cached image, then revalidate it with the server (ETag / Last-Modified) and
    /// deliver again only if it changed.
    public static let refreshCached = ImageLoadOptions(rawValue: 1 << 5)
    /// Never download: a cache miss fails with ``WebImageError/notCached``.
    public static let fromCacheOnly = ImageLoadOptions(rawValue: 1 << 6)
    /// Skip the cache query and always load (the result is still stored).
    public static let fromLoaderOnly = ImageLoadOptions(rawValue: 1 << 7)
    /// For view bindings: show the placeholder only after the load failed, not while it runs.
    public static let delayPlaceholder = ImageLoadOptions(rawValue: 1 << 8)
    /// For view bindings: hand the image to the completion handler instead of setting it.
    public static let avoidAutoSetImage = ImageLoadOptions(rawValue: 1 << 9)
    /// Decode images over the manager's ``ImageManagerConfiguration/scaleDownPixelLimit`` smaller
    /// instead of at full size.
    public static let scaleDownLargeImages = ImageLoadOptions(rawValue: 1 << 10)
    /// Apply the transformer to animated images too (by default they are delivered untransformed).
    public static let transformAnimatedImage = ImageLoadOptions(rawValue: 1 << 11)
    /// On a memory hit, also read the original bytes from disk into ``ImageResult/data``.
    public static let queryMemoryDataToo = ImageLoadOptions(rawValue: 1 << 12)
    /// Deliver only after the result is stored in the caches (by default storing runs behind delivery).
    public static let waitStoreCache = ImageLoadOptions(rawValue: 1 << 13)
    /// Decode only the first frame of an animated image.
    public static let decodeFirstFrameOnly = ImageLoadOptions(rawValue: 1 << 14)
}
