#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a cached image was found.
public enum ImageCacheType: String, Sendable, Hashable, Codable {
    /// Not in any cache.
    case none
    /// In the memory cache (decoded).
    case memory
    /// In the disk cache (encoded; decoded on the way out).
    case disk
}

/// What a disk entry remembers about its bytes.
public struct ImageCacheMetadata: Sendable, Hashable, Codable {
    /// The URL the bytes came from.
    public var originalURL: String?
    /// The `Content-Type` they were served with.
    public var contentType: String?
    /// The `ETag` they were served with.
    public var etag: String?
    /// The `Last-Modified` they were served with.
    public var lastModified: String?
    /// When they were stored.
    public var storedDate: Date

    public init(originalURL: String? = nil, contentType: String? = nil, etag: String? = nil,
                lastModified: String? = nil, storedDate: Date = Date()) {
        self.originalURL = originalURL
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.storedDate = storedDate
    }

    /// Validators to revalidate the stored bytes with.
    public var validators: HTTPLoadRequest.Validators { HTTPLoadRequest.Validators(etag: etag, lastModified: lastModified) }
}

/// How a cache query behaves.
public struct ImageCacheQueryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Look in memory only.
    public static let memoryOnly = ImageCacheQueryOptions(rawValue: 1 << 0)
    /// Also read the original bytes from disk when the image is found in memory.
    public static let queryMemoryData = ImageCacheQueryOptions(rawValue: 1 << 1)
    /// Read from disk on the calling task instead of the cache's I/O executor.
    public static let synchronousDisk = ImageCacheQueryOptions(rawValue: 1 << 2)
    /// Do not put an image decoded from disk into memory.
    public static let skipMemoryStore = ImageCacheQueryOptions(rawValue: 1 << 3)
    /// Return a disk hit's bytes without decoding them (the result's image is `nil`): the
    /// caller decodes them. The manager does, in its decode stage, at the load's priority,
    /// shared with the other loads of the same bytes. A memory hit still returns the image.
    public static let undecoded = ImageCacheQueryOptions(rawValue: 1 << 4)
}

/// The answer to a cache query.
public struct ImageCacheResult: Sendable {
    /// The image, decoded.
    public var image: DecodedImage?
    /// The stored bytes, when read (always for disk hits; for memory hits with ``ImageCacheQueryOptions/queryMemoryData``).
    public var data: Data?
    /// Where it was found.
    public var cacheType: ImageCacheType
    /// The disk entry's metadata, when the disk was read.
    public var metadata: ImageCacheMetadata?

    public init(image: DecodedImage? = nil, data: Data? = nil, cacheType: ImageCacheType = .none,
                metadata: ImageCacheMetadata? = nil) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.metadata = metadata
    }

    /// Nothing found.
    public static let miss = ImageCacheResult()
}

/// Where a store goes.
public enum ImageCacheStoreTarget: Sendable, Hashable {
    case memory, disk, memoryAndDisk
}

/// A two-level image cache: the cache stage of the pipeline.
public protocol ImageCaching: Sendable {
    /// Looks `key` up in memory, then (unless memory-only) on disk; a disk hit is decoded with
    /// `decodeOptions` off the caller's task and, unless told otherwise, put in memory (with
    /// ``ImageCacheQueryOptions/undecoded``, its bytes are returned instead).
    func query(key: String, options: ImageCacheQueryOptions, decodeOptions: DecodeOptions) async -> ImageCacheResult
    /// Stores an image and/or its encoded bytes. With no `data`, the disk copy is encoded from `image`.
    func store(_ image: DecodedImage?, data: Data?, metadata: ImageCacheMetadata?, key: String,
               to target: ImageCacheStoreTarget) async
    /// Where `key` is cached, without decoding it.
    func contains(key: String) async -> ImageCacheType
    /// Whether `key`'s bytes are on disk, whether or not its image is also in memory.
    func containsOnDisk(key: String) async -> Bool
    /// Removes `key` from memory and, if asked, from disk.
    func remove(key: String, fromDisk: Bool) async
    /// Empties the memory cache.
    func clearMemory() async
    /// Empties the disk cache.
    func clearDisk() async
}

extension ImageCaching {
    /// For caches that can only say where a key is found first: a memory hit says nothing about
    /// the disk, so the bytes are asked for (``ImageCache`` answers from its disk index instead).
    public func containsOnDisk(key: String) async -> Bool {
        if case .disk = await contains(key: key) { return true }
        return await query(key: key, options: [.queryMemoryData, .undecoded], decodeOptions: DecodeOptions()).data != nil
    }
}
