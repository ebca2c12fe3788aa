#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Rendered outputs, by output key (source key + options + format choice), and the sources they
/// are rendered from, by source URL: in memory, and on disk when the service has a cache
/// directory, so repeat requests are served without fetching or decoding, and a new variant of a
/// source already seen is rendered without fetching it again.
///
/// Both kinds share the library's caches and their bounds: one ``MemoryCache`` (cost: bytes kept,
/// at most ``ServerConfiguration/memoryCacheBytes``) and one ``DiskCache`` (its size limit), the
/// bytes with their `Content-Type` and ETag (a source's Last-Modified too) in its metadata.
/// ``ImageCache`` is not used for the sources: its memory tier keeps decoded bitmaps (48 MB for a
/// 12 MP photo), where the service keeps the encoded bytes and decodes each variant at the size it needs.
/// A file the disk cache cannot read back (foreign, truncated) is a miss, never an error.
final class OutputCache: Sendable {
    /// Where a hit came from (`store`: the fleet's ``ResultStore``, not this cache).
    enum Tier: String, Sendable, CaseIterable { case memory, disk, store }

    /// What the memory tier holds under a key.
    private enum Entry: Sendable {
        case output(RenderedImage)
        case source(SourceImage)

        var cost: Int {
            switch self {
            case .output(let image): image.body.count
            case .source(let source): source.data.count
            }
        }
    }

    private let memory: MemoryCache<String, Entry>
    private let disk: DiskCache?
    private let writes = BackgroundWrites()

    init(directory: URL?, memoryBytes: Int) {
        memory = MemoryCache(costLimit: memoryBytes)
        disk = directory.map { DiskCache(configuration: DiskCacheConfiguration(directory: $0)) }
    }

    /// The output stored under `key`, from memory first; a disk hit is kept in memory too.
    func value(forKey key: String) async -> (image: RenderedImage, tier: Tier)? {
        if let hit = memoryValue(forKey: key) { return (hit, .memory) }
        guard let disk, let entry = await disk.entry(forKey: key),
              let contentType = entry.metadata.contentType, let etag = entry.metadata.etag else { return nil }
        let image = RenderedImage(body: entry.data, contentType: contentType, etag: etag)
        put(.output(image), forKey: key)
        return (image, .disk)
    }

    /// The output stored under `key` in memory, if any.
    func memoryValue(forKey key: String) -> RenderedImage? {
        guard case .output(let image) = memory.value(forKey: key) else { return nil }
        return image
    }

    /// Stores `image` under `key`: in memory at once, so the next request finds it; on disk in
    /// the background (best effort: a full disk only costs a later render), so no response waits for the write.
    func store(_ image: RenderedImage, forKey key: String) {
        put(.output(image), forKey: key)
        storeOnDisk(image.body, metadata: ImageCacheMetadata(contentType: image.contentType, etag: image.etag), forKey: key)
    }

    /// The source kept for `url` in memory, if any.
    func memorySource(for url: URL) -> SourceImage? {
        guard case .source(let source) = memory.value(forKey: Self.sourceKey(url)) else { return nil }
        return source
    }

    /// The source kept for `url`, from memory first; a disk hit is kept in memory too.
    func source(for url: URL) async -> (source: SourceImage, tier: Tier)? {
        if let hit = memorySource(for: url) { return (hit, .memory) }
        let key = Self.sourceKey(url)
        // The URL in the metadata guards against a foreign entry under the same file name.
        guard let disk, let entry = await disk.entry(forKey: key), entry.metadata.originalURL == url.absoluteString else { return nil }
        let source = SourceImage(data: entry.data, metadata: entry.metadata)
        put(.source(source), forKey: key)
        return (source, .disk)
    }

    /// Keeps `source` under its URL: in memory at once, on disk in the background.
    func storeSource(_ source: SourceImage, for url: URL) {
        let key = Self.sourceKey(url)
        put(.source(source), forKey: key)
        storeOnDisk(source.data, metadata: source.metadata, forKey: key)
    }

    /// Waits for the disk writes under way (on shutdown, so a restart finds them).
    func waitForPendingStores() async {
        await writes.waitForAll()
    }

    /// A source's key: no output key starts with it (those start with the URL itself).
    private static func sourceKey(_ url: URL) -> String { "source\n" + url.absoluteString }

    private func put(_ entry: Entry, forKey key: String) {
        memory.setValue(entry, forKey: key, cost: entry.cost)
    }

    private func storeOnDisk(_ data: Data, metadata: ImageCacheMetadata, forKey key: String) {
        guard let disk else { return }
        writes.run { try? await disk.store(data, metadata: metadata, forKey: key) }
    }
}
