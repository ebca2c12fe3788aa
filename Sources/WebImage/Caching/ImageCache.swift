#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The two-level image cache the manager uses: decoded images in a ``MemoryCache``, encoded
/// bytes in a ``DiskCache``.
///
/// A disk hit is decoded off the caller's task and promoted to memory. Concurrent queries of the
/// same key with the same decode options share one disk read and one decode.
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

    /// Disk reads and decodes, at most one per core at a time.
    private let decoding = WorkQueue(width: ProcessInfo.processInfo.activeProcessorCount)

    /// In-flight disk reads and decodes, by key and decode options; guards only the table.
    private let inFlight = Locked<[String: Task<ImageCacheResult, Never>]>([:])

    /// Creates a cache from its parts.
    /// - Parameter memoryPressure: the control group whose memory pressure empties the memory
    ///   cache (polled every two seconds while the cache lives); `nil` to never shed. Nothing
    ///   is polled when the group has no memory limit.
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
                let entry = options.contains(.synchronousDisk) ? diskCache.entrySynchronously(forKey: key) : await diskCache.entry(forKey: key)
                result.data = entry?.data
                result.metadata = entry?.metadata
            }
            return result
        }
        guard !options.contains(.memoryOnly) else { return .miss }
        if options.contains(.synchronousDisk) {
            return decodeFromDisk(key: key, options: options, decodeOptions: decodeOptions)
        }
        let flightKey = "\(key)\u{1F}\(decodeOptions.hashValue)\u{1F}\(options.contains(.skipMemoryStore))"
        let task: Task<ImageCacheResult, Never> = inFlight.withLock { table in
            if let running = table[flightKey] { return running }
            let task = Task.detached(priority: Task.currentPriority) { [self] in
                // The read and the decode block: they run off the cooperative threads, one per core.
                (try? await decoding.perform(ticket: decoding.makeTicket(), priority: .normal) { [self] in
                    decodeFromDisk(key: key, options: options, decodeOptions: decodeOptions)
                }) ?? .miss
            }
            table[flightKey] = task
            return task
        }
        let result = await task.value
        inFlight.withLock { table in
            if table[flightKey] == task { table[flightKey] = nil }
        }
        return result
    }

    private func decodeFromDisk(key: String, options: ImageCacheQueryOptions, decodeOptions: DecodeOptions) -> ImageCacheResult {
        guard let entry = diskCache.entrySynchronously(forKey: key) else { return .miss }
        guard let image = try? coders.decode(entry.data, options: decodeOptions) else {
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
        let bytes = image.flatMap { serializer.data(for: $0, original: data, coders: coders) } ?? data
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
