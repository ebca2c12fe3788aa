#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The cache's data tier: encoded bytes by key (the outputs of the encode stage, and the sources
/// they are rendered from), in memory and, with a ``DiskCache``, on disk. Where ``ImageCache``
/// keeps decoded bitmaps (48 MB for a 12 MP photo), this keeps what was sent or will be sent:
/// a few hundred kilobytes, decoded again at the size each output needs.
///
/// Memory (cost: bytes kept, at most the limit given) answers first; a disk hit is kept in memory
/// too. Disk writes run in the background (best effort: a full disk costs a later render, and no
/// caller waits for the write). A disk entry the caller does not recognise (foreign, or left by
/// another version) is a miss, never an error.
public final class ImageDataCache: Sendable {
    /// When a memory entry goes to disk.
    public enum DiskWrite: Sendable, Hashable {
        /// Now (an output: the next request for it is likely).
        case now
        /// On its second use from memory (a source: most are rendered in one variant, and writing
        /// every one, megabytes each at 12 MP, cost a service a quarter of its renders a second
        /// on distinct sources, issue #30, for copies nobody read again).
        case onReuse
        /// Never (the origin said `no-store`).
        case never
    }

    /// Bytes and what the disk cache keeps beside them.
    public struct Entry: Sendable {
        /// The bytes.
        public var data: Data
        /// Their type, validators, origin.
        public var metadata: ImageCacheMetadata

        /// An entry.
        public init(data: Data, metadata: ImageCacheMetadata) {
            self.data = data
            self.metadata = metadata
        }
    }

    private struct Stored: Sendable {
        var entry: Entry
        /// Whether its second use writes it to disk.
        var writesOnReuse: Bool
    }

    private let memory: MemoryCache<String, Stored>
    /// The disk tier, if any.
    public let disk: DiskCache?
    private let writes = BackgroundWrites()

    /// A data tier of at most `memoryBytes` in memory, over `disk` if given.
    public init(memoryBytes: Int, disk: DiskCache?) {
        memory = MemoryCache(costLimit: memoryBytes)
        self.disk = disk
    }

    /// The entry under `key` in memory, if any. An entry stored with ``DiskWrite/onReuse`` is
    /// written to disk now: this is its second use.
    public func memoryValue(forKey key: String) -> Entry? {
        guard let stored = memory.value(forKey: key) else { return nil }
        if stored.writesOnReuse, disk != nil {
            put(Stored(entry: stored.entry, writesOnReuse: false), forKey: key)
            storeOnDisk(stored.entry, forKey: key)
        }
        return stored.entry
    }

    /// The entry under `key`, from memory first; a disk hit whose metadata `accepts` is kept in
    /// memory too and answered with ``ImageCacheType/disk``.
    public func value(forKey key: String, accepts: (ImageCacheMetadata) -> Bool = { _ in true }) async -> (entry: Entry, tier: ImageCacheType)? {
        if let entry = memoryValue(forKey: key) { return (entry, .memory) }
        guard let disk, let read = await disk.entry(forKey: key), accepts(read.metadata) else { return nil }
        let entry = Entry(data: read.data, metadata: read.metadata)
        put(Stored(entry: entry, writesOnReuse: false), forKey: key)
        return (entry, .disk)
    }

    /// Keeps `entry` under `key` in memory at once (the next caller finds it), and on disk as `diskWrite` says.
    public func store(_ entry: Entry, forKey key: String, diskWrite: DiskWrite) {
        put(Stored(entry: entry, writesOnReuse: diskWrite == .onReuse), forKey: key)
        if diskWrite == .now { storeOnDisk(entry, forKey: key) }
    }

    /// Waits for the disk writes under way (before a process exits, so a restart finds them).
    public func waitForPendingStores() async {
        await writes.waitForAll()
    }

    private func put(_ stored: Stored, forKey key: String) {
        memory.setValue(stored, forKey: key, cost: stored.entry.data.count)
    }

    private func storeOnDisk(_ entry: Entry, forKey key: String) {
        guard let disk else { return }
        writes.runBlocking { try? disk.storeSynchronously(entry.data, metadata: entry.metadata, forKey: key) }
    }
}

extension ImageDataCache {
    /// A data tier of at most `memoryBytes` in memory, over a disk cache in `directory` if given
    /// (created on first write).
    public convenience init(memoryBytes: Int, directory: URL?) {
        self.init(memoryBytes: memoryBytes, disk: directory.map { DiskCache(configuration: DiskCacheConfiguration(directory: $0)) })
    }
}
