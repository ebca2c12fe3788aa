#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageManager {
    /// A manager for encoded loads only (``encodedImage(for:)``), as a server embeds it: its
    /// caches are `dataCache` and `remoteStore`, and it keeps no decoded images (a decoded load
    /// through it runs uncached).
    public convenience init(dataCache: ImageDataCache, remoteStore: (any ImageDataCache.SharedStore)? = nil,
                            loader: any ImageLoader = ImageDownloader.shared, coders: ImageCodersManager = .shared,
                            configuration: ImageManagerConfiguration = ImageManagerConfiguration()) {
        self.init(cache: KeepsNoImages(), loader: loader, coders: coders, configuration: configuration,
                  dataCache: dataCache, remoteStore: remoteStore)
    }
}

/// The decoded tier of a manager for encoded loads only: every query misses, nothing is kept.
struct KeepsNoImages: ImageCaching {
    func query(key: String, options: ImageCacheQueryOptions, decodeOptions: DecodeOptions) async -> ImageCacheResult { .miss }
    func store(_ image: DecodedImage?, data: Data?, metadata: ImageCacheMetadata?, key: String, to target: ImageCacheStoreTarget) async {}
    func contains(key: String) async -> ImageCacheType { .none }
    func containsOnDisk(key: String) async -> Bool { false }
    func remove(key: String, fromDisk: Bool) async {}
    func clearMemory() async {}
    func clearDisk() async {}
}
