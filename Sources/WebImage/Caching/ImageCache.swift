#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The two-level image cache the manager uses: decoded images in a ``MemoryCache``, encoded
/// bytes in a ``DiskCache``.
///
/// A disk hit is decoded off the caller's task, within the process's CPU budget (a slot per
/// core, shared with the manager's decodes), and promoted to memory; the manager asks for the bytes instead
/// (``ImageCacheQueryOptions/undecoded``) and decodes them in its own decode stage. Concurrent
/// queries of the same key share one disk read, and with the same decode options one decode
/// (run at the highest priority among them, and stopped when the last one is cancelled).
/// Disk reads and writes take a slot of the process's blocking-I/O budget, encodes one of the
/// CPU budget.
public final class ImageCache: ImageCaching {
    /// The cache loads use unless told otherwise (namespace `default`).
    public static let shared = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(
        directory: DiskCacheConfiguration.platformCacheDirectory.appendingPathComponent("swift-webimage/default", isDirectory: true))))

    /// Decoded images by key; cost is decoded bytes.
    public let memoryCache: MemoryCache<String, DecodedImage>
    /// Encoded bytes by key.
    public let diskCache: DiskCache
    /// Decodes disk hits and encodes images that have no original bytes.
    public let coders: ImageCodersManager
    /// Chooses what bytes go to disk.
    public let serializer: any CacheSerializer

    /// Empties ``memoryCache`` when the process's control group nears its memory limit; `nil`
    /// when the group has no limit (or none was given). See ``MemoryPressureMonitor``.
    package let memoryPressureMonitor: MemoryPressureMonitor?

    /// Disk reads and decodes in flight.
    private let inFlight = SharedWorkPool<CacheReadKey>()

    /// Creates a cache from its parts.
    /// - Parameters:
    ///   - memoryCache: decoded images by key (``memoryCache``); a new, empty ``MemoryCache`` by default.
    ///   - diskCache: encoded bytes by key (``diskCache``).
    ///   - coders: decodes disk hits and encodes images that have no original bytes (``coders``).
    ///   - serializer: chooses what bytes go to disk (``serializer``); by default the original
    ///     bytes when there are any, else an encode (``DefaultCacheSerializer``).
    ///   - memoryPressure: the control group whose memory pressure empties the memory
    ///     cache (polled every two seconds while the cache lives); `nil` to never shed. Nothing
    ///     is polled when the group has no memory limit.
    public init(memoryCache: MemoryCache<String, DecodedImage> = MemoryCache(), diskCache: DiskCache,
                coders: ImageCodersManager = .shared, serializer: any CacheSerializer = DefaultCacheSerializer(),
                memoryPressure: CgroupMemory? = .current) {
        self.memoryCache = memoryCache
        self.diskCache = diskCache
        self.coders = coders
        self.serializer = serializer
        if let memoryPressure, memoryPressure.limit != nil {
            // The monitor holds the memory cache, not the ImageCache: no cycle, and the polling
            // stops when this cache (the monitor's only owner) is released.
            let monitor = MemoryPressureMonitor(memory: memoryPressure) { _ in memoryCache.removeAll() }
            monitor.start()
            memoryPressureMonitor = monitor
        } else {
            memoryPressureMonitor = nil
        }
    }

    /// A cache whose disk part lives in `namespace` under the platform cache directory (or `directory`).
    /// - Throws: ``WebImageError/invalidNamespace(_:)`` for a namespace that is not one plain
    ///   directory name (see ``DiskCacheConfiguration/directory(namespace:root:)``).
    public convenience init(namespace: String, directory: URL? = nil) throws {
        try DiskCacheConfiguration.validate(namespace: namespace)
        let configuration = try directory.map { DiskCacheConfiguration(directory: $0) } ?? DiskCacheConfiguration(namespace: namespace)
        self.init(diskCache: DiskCache(configuration: configuration))
    }

    public func query(key: String, options: ImageCacheQueryOptions = [], decodeOptions: DecodeOptions = DecodeOptions()) async -> ImageCacheResult {
        if let image = memoryCache.value(forKey: key) {
            var result = ImageCacheResult(image: image, cacheType: .memory)
            if options.contains(.queryMemoryData), !options.contains(.memoryOnly) {
                let entry = options.contains(.synchronousDisk) ? diskCache.entrySynchronously(forKey: key).map(DiskEntry.init)
                                                               : await read(key, priority: LoadPriority(Task.currentPriority))
                result.data = entry?.data
                result.metadata = entry?.metadata
            }
            return result
        }
        guard !options.contains(.memoryOnly) else { return .miss }
        if options.contains(.synchronousDisk) {
            guard let entry = diskCache.entrySynchronously(forKey: key).map(DiskEntry.init) else { return .miss }
            return options.contains(.undecoded) ? entry.undecodedHit : decode(entry, key: key, options: options, decodeOptions: decodeOptions)
        }
        let priority = LoadPriority(Task.currentPriority)
        if options.contains(.undecoded) {
            return await read(key, priority: priority)?.undecodedHit ?? .miss
        }
        let flightKey = CacheReadKey.decode(key: key, options: decodeOptions, storesInMemory: !options.contains(.skipMemoryStore))
        let subscription: SharedWorkSubscription<ImageCacheResult> = inFlight.subscribe(key: flightKey, priority: priority) { [self] work in
            // The read is joined now, so a query that joined this decode shares its read too.
            let read = readSubscription(key, priority: priority)
            let ticket = WorkQueue.cpu.makeTicket()
            work.onPriorityChange { priority in
                read.setPriority(priority)
                WorkQueue.cpu.setPriority(priority, ticket: ticket)
            }
            return { [self] work in
                guard let entry = try await read.value() else { return .miss }
                return try await WorkQueue.cpu.perform(ticket: ticket, priority: work.priority) { [self] in
                    decode(entry, key: key, options: options, decodeOptions: decodeOptions)
                }
            }
        }
        return await withTaskCancellationHandler {
            (try? await subscription.value()) ?? .miss
        } onCancel: {
            subscription.cancelFromCancellationHandler()
        }
    }

    /// One disk entry, as read.
    private struct DiskEntry: Sendable {
        let data: Data
        let metadata: ImageCacheMetadata

        init(_ entry: (data: Data, metadata: ImageCacheMetadata)) {
            data = entry.data
            metadata = entry.metadata
        }

        var undecodedHit: ImageCacheResult { ImageCacheResult(image: nil, data: data, cacheType: .disk, metadata: metadata) }
    }

    /// Reads `key`'s entry in the blocking-I/O budget; concurrent reads of one key share one.
    private func read(_ key: String, priority: LoadPriority) async -> DiskEntry? {
        let subscription = readSubscription(key, priority: priority)
        return await withTaskCancellationHandler {
            try? await subscription.value()
        } onCancel: {
            subscription.cancelFromCancellationHandler()
        }
    }

    private func readSubscription(_ key: String, priority: LoadPriority) -> SharedWorkSubscription<DiskEntry?> {
        inFlight.subscribe(key: .read(key), priority: priority) { [diskCache] read in
            let ticket = WorkQueue.blockingIO.makeTicket()
            read.onPriorityChange { WorkQueue.blockingIO.setPriority($0, ticket: ticket) }
            return { read in
                try await WorkQueue.blockingIO.perform(ticket: ticket, priority: read.priority) {
                    diskCache.entrySynchronously(forKey: key).map(DiskEntry.init)
                }
            }
        }
    }

    /// Decodes a disk entry and promotes the image to memory; bytes that no longer decode are dropped.
    private func decode(_ entry: DiskEntry, key: String, options: ImageCacheQueryOptions, decodeOptions: DecodeOptions) -> ImageCacheResult {
        guard let image = try? coders.decodeForDisplay(entry.data, options: decodeOptions) else {
            // Bytes that no longer decode are worth nothing: drop them.
            Task { await diskCache.remove(key: key) }
            return .miss
        }
        if !options.contains(.skipMemoryStore) { memoryCache.setValue(image, forKey: key, cost: image.cost) }
        return ImageCacheResult(image: image, data: entry.data, cacheType: .disk, metadata: entry.metadata)
    }

    public func store(_ image: DecodedImage?, data: Data?, metadata: ImageCacheMetadata? = nil, key: String,
                      to target: ImageCacheStoreTarget = .memoryAndDisk) async {
        if let image, target != .disk { memoryCache.setValue(image, forKey: key, cost: image.cost) }
        guard target != .memory else { return }
        var bytes = data
        if let image {
            let serializer = serializer, coders = coders
            if let data, !data.isEmpty {
                bytes = serializer.data(for: image, original: data, coders: coders)
            } else {
                // No original bytes: the serializer encodes, which is CPU work like a decode.
                bytes = await WorkQueue.cpu.performIgnoringCancellation(priority: LoadPriority(Task.currentPriority)) {
                    serializer.data(for: image, original: data, coders: coders)
                }
            }
        }
        guard let bytes, !bytes.isEmpty else { return }
        try? await diskCache.store(bytes, metadata: metadata ?? ImageCacheMetadata(), forKey: key)
    }

    public func contains(key: String) async -> ImageCacheType {
        if memoryCache.contains(key) { return .memory }
        return await diskCache.contains(key: key) ? .disk : .none
    }

    public func containsOnDisk(key: String) async -> Bool {
        await diskCache.contains(key: key)
    }

    public func remove(key: String, fromDisk: Bool = true) async {
        memoryCache.removeValue(forKey: key)
        if fromDisk { await diskCache.remove(key: key) }
    }

    public func clearMemory() async { memoryCache.removeAll() }

    public func clearDisk() async { await diskCache.removeAll() }
}
