#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Rendered outputs, by output key (source key + options + format choice): in memory, and on disk
/// when the service has a cache directory, so repeat requests are served without fetching or decoding.
///
/// The disk tier is the library's ``DiskCache``: the bytes with their `Content-Type` and ETag in
/// its metadata. A file it cannot read back (foreign, truncated) is a miss, never an error.
final class OutputCache: Sendable {
    /// Where a hit came from.
    enum Tier: String, Sendable { case memory, disk }

    private let memory: MemoryCache<String, RenderedImage>
    private let disk: DiskCache?
    private let pending = Locked<(next: Int, tasks: [Int: Task<Void, Never>])>((0, [:]))

    init(directory: URL?, memoryBytes: Int) {
        memory = MemoryCache(costLimit: memoryBytes)
        disk = directory.map { DiskCache(configuration: DiskCacheConfiguration(directory: $0)) }
    }

    /// The output stored under `key`, from memory first; a disk hit is kept in memory too.
    func value(forKey key: String) async -> (image: RenderedImage, tier: Tier)? {
        if let hit = memory.value(forKey: key) { return (hit, .memory) }
        guard let disk, let entry = await disk.entry(forKey: key),
              let contentType = entry.metadata.contentType, let etag = entry.metadata.etag else { return nil }
        let image = RenderedImage(body: entry.data, contentType: contentType, etag: etag)
        memory.setValue(image, forKey: key, cost: image.body.count)
        return (image, .disk)
    }

    /// The output stored under `key` in memory, if any.
    func memoryValue(forKey key: String) -> RenderedImage? {
        memory.value(forKey: key)
    }

    /// Stores `image` under `key`: in memory at once, so the next request finds it; on disk in
    /// the background (best effort: a full disk only costs a later render), so no response waits for the write.
    func store(_ image: RenderedImage, forKey key: String) {
        memory.setValue(image, forKey: key, cost: image.body.count)
        guard let disk else { return }
        let pending = pending
        pending.withLock { state in
            let id = state.next
            state.next += 1
            state.tasks[id] = Task {
                try? await disk.store(image.body, metadata: ImageCacheMetadata(contentType: image.contentType, etag: image.etag), forKey: key)
                pending.withLock { $0.tasks[id] = nil }
            }
        }
    }

    /// Waits for the disk writes under way (on shutdown, so a restart finds them).
    func waitForPendingStores() async {
        while let task = pending.withLock({ $0.tasks.values.first }) {
            await task.value
        }
    }
}
