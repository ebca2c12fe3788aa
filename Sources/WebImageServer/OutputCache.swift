#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Rendered outputs, by output key (source key + options + format choice), and the sources they
/// are rendered from, by source URL: in memory, and on disk when the service has a cache
/// directory (a source from its second use on), so repeat requests are served without fetching
/// or decoding, and a new variant of a source already seen is rendered without fetching it again.
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
        /// `onDisk`: written to the disk tier (or read from it) already.
        case source(SourceImage, onDisk: Bool)

        var cost: Int {
            switch self {
            case .output(let image): image.body.count
            case .source(let source, _): source.data.count
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

    /// The source kept for `url` in memory, if any. Its second use writes it to disk: a source
    /// goes there only once a second variant shows it is worth keeping (see ``storeSource(_:for:)``).
    func memorySource(for url: URL) -> SourceImage? {
        let key = Self.sourceKey(url)
        guard case .source(let source, let onDisk) = memory.value(forKey: key) else { return nil }
        if !onDisk, disk != nil {
            put(.source(source, onDisk: true), forKey: key)
            storeOnDisk(source.data, metadata: source.metadata, forKey: key)
        }
        return source
    }

    /// The source kept for `url`, from memory first; a disk hit is kept in memory too.
    func source(for url: URL) async -> (source: SourceImage, tier: Tier)? {
        if let hit = memorySource(for: url) { return (hit, .memory) }
        let key = Self.sourceKey(url)
        // The URL in the metadata guards against a foreign entry under the same file name.
        guard let disk, let entry = await disk.entry(forKey: key), entry.metadata.originalURL == url.absoluteString else { return nil }
        let source = SourceImage(data: entry.data, metadata: entry.metadata)
        put(.source(source, onDisk: true), forKey: key)
        return (source, .disk)
    }

    /// Keeps `source` under its URL in memory; it is written to disk on its second use
    /// (``memorySource(for:)``), not now. Most sources of a public service are asked for in one
    /// variant: writing every one (megabytes each at 12 MP) cost the service about a quarter of
    /// its renders per second on distinct sources (issue #30), for copies nobody read again.
    func storeSource(_ source: SourceImage, for url: URL) {
        put(.source(source, onDisk: false), forKey: Self.sourceKey(url))
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
        writes.runBlocking { try? disk.storeSynchronously(data, metadata: metadata, forKey: key) }
    }
}
