import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

@Suite struct ImageCacheTests {
    /// Counts decodes while delegating to the real coders.
    final class CountingCoder: ImageCoder {
        let decodes = Locked(0)
        func canDecode(_ data: Data) -> Bool { true }
        func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
            decodes.withLock { $0 += 1 }
            return try ImageCodersManager(coders: ImageCodersManager.defaultCoders).decode(data, options: options)
        }
    }

    private func makeCache(_ directory: TemporaryDirectory, coders: ImageCodersManager = .shared) -> ImageCache {
        ImageCache(memoryCache: MemoryCache(costLimit: 64 << 20),
                   diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)), coders: coders)
    }

    @Test func memoryHitThenDiskHitPromotedToMemory() async throws {
        let directory = try TemporaryDirectory()
        let cache = makeCache(directory)
        let png = try SampleImages.encoded(.png, width: 30, height: 20)
        let image = try ImageCodersManager.shared.decode(png, options: DecodeOptions())
        await cache.store(image, data: png, metadata: ImageCacheMetadata(etag: "\"e\""), key: "k")
        #expect(await cache.contains(key: "k") == .memory)
        let memory = await cache.query(key: "k")
        #expect(memory.cacheType == .memory && memory.data == nil && memory.image?.width == 30)
        let withData = await cache.query(key: "k", options: .queryMemoryData)
        #expect(withData.data == png && withData.metadata?.etag == "\"e\"")
        await cache.clearMemory()
        #expect(await cache.contains(key: "k") == .disk)
        #expect(await cache.query(key: "k", options: .memoryOnly).cacheType == .none)
        let disk = await cache.query(key: "k")
        #expect(disk.cacheType == .disk && disk.data == png && disk.image?.height == 20)
        #expect(await cache.query(key: "k").cacheType == .memory)
        let synchronous = await cache.query(key: "k", options: [.synchronousDisk, .skipMemoryStore])
        #expect(synchronous.cacheType == .memory)
        await cache.remove(key: "k", fromDisk: true)
        #expect(await cache.contains(key: "k") == ImageCacheType.none)
    }

    @Test func serializerEncodesWhenThereIsNoOriginalData() async throws {
        let directory = try TemporaryDirectory()
        let cache = makeCache(directory)
        let opaque = DecodedImage(bitmap: try SampleImages.gradient(width: 16, height: 16), hasAlpha: false)
        let clear = DecodedImage(bitmap: try SampleImages.quadrants(width: 16, height: 16, transparentCenter: true), hasAlpha: true)
        await cache.store(opaque, data: nil, key: "opaque", to: .disk)
        await cache.store(clear, data: nil, key: "clear", to: .disk)
        let opaqueBytes = try #require(await cache.diskCache.data(forKey: "opaque"))
        let clearBytes = try #require(await cache.diskCache.data(forKey: "clear"))
        #expect(ImageFormat.detect(opaqueBytes) == .jpeg && ImageFormat.detect(clearBytes) == .png)
        #expect(await cache.contains(key: "opaque") == .disk, "a disk-only store leaves memory alone")
    }

    @Test func concurrentQueriesOfOneKeyDecodeOnce() async throws {
        let directory = try TemporaryDirectory()
        let counter = CountingCoder()
        let cache = makeCache(directory, coders: ImageCodersManager(coders: [counter]))
        try await cache.diskCache.store(try SampleImages.encoded(.jpeg, width: 800, height: 600), forKey: "shared")
        let results = await withTaskGroup(of: ImageCacheType.self) { group in
            for _ in 0..<20 { group.addTask { await cache.query(key: "shared").cacheType } }
            return await group.reduce(into: [ImageCacheType]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 != .none })
        #expect(counter.decodes.withLock { $0 } == 1)
    }

    @Test func downsamplesWhileDecodingFromDiskAndDropsUndecodableBytes() async throws {
        let directory = try TemporaryDirectory()
        let cache = makeCache(directory)
        try await cache.diskCache.store(try SampleImages.encoded(.jpeg, width: 640, height: 480), forKey: "big")
        let thumbnail = await cache.query(key: "big", options: .skipMemoryStore, decodeOptions: DecodeOptions(maxPixelSize: 64))
        #expect(thumbnail.image?.width == 64 && thumbnail.image?.height == 48)
        #expect(await cache.contains(key: "big") == .disk)
        try await cache.diskCache.store(Data("garbage".utf8), forKey: "bad")
        #expect(await cache.query(key: "bad").cacheType == .none)
    }
}
