import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import WebImage

/// A fresh directory per test, removed at the end.
final class TemporaryDirectory: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite struct DiskCacheTests {
    /// A clock the test moves by hand.
    final class Clock: Sendable {
        private let current = Locked(Date(timeIntervalSince1970: 1_700_000_000))
        var now: Date { current.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
    }

    @Test func storesReadsAndKeepsMetadata() async throws {
        let directory = try TemporaryDirectory()
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
        let metadata = ImageCacheMetadata(originalURL: "https://example.com/a.png", contentType: "image/png",
                                          etag: "\"v1\"", lastModified: "Mon, 23 Nov 2026 04:00:00 GMT",
                                          storedDate: Date(timeIntervalSince1970: 1_800_000_000))
        try await cache.store(Data("pixels".utf8), metadata: metadata, forKey: "https://example.com/a.png")
        let entry = try #require(await cache.entry(forKey: "https://example.com/a.png"))
        #expect(entry.data == Data("pixels".utf8) && entry.metadata == metadata)
        let count = await cache.count, size = await cache.totalSize
        #expect(count == 1 && size > 6)
        #expect(await cache.contains(key: "https://example.com/a.png"))
        await cache.remove(key: "https://example.com/a.png")
        let gone = await cache.data(forKey: "https://example.com/a.png"), remaining = await cache.count
        #expect(gone == nil && remaining == 0)
    }

    @Test func fileNamesAreHashedWithTheImageExtension() throws {
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: URL(fileURLWithPath: "/nonexistent")))
        let name = cache.fileName(forKey: "https://example.com/../../etc/passwd?x=1")
        #expect(name.count == 64 && !name.contains("/"))
        #expect(cache.fileName(forKey: "https://example.com/photo.JPG?size=2").hasSuffix(".jpg"))
        #expect(cache.fileName(forKey: "a") != cache.fileName(forKey: "b"))
    }

    @Test func expiresByLastAccessOrCreation() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        for basis in [DiskCacheConfiguration.AgeBasis.lastAccess, .creation] {
            let folder = directory.url.appendingPathComponent("\(basis)")
            let cache = DiskCache(configuration: DiskCacheConfiguration(directory: folder, maxAge: .seconds(100), ageBasis: basis),
                                  now: { clock.now })
            try await cache.store(Data([1]), forKey: "old")
            try await cache.store(Data([2]), forKey: "read")
            clock.advance(60)
            _ = await cache.data(forKey: "read")
            clock.advance(60)
            #expect(await cache.data(forKey: "old") == nil, "\(basis)")
            let survived = await cache.data(forKey: "read") != nil
            #expect(survived == (basis == .lastAccess), "\(basis)")
            try await cache.store(Data([3]), forKey: "fresh")
            clock.advance(150)
            try await cache.store(Data([4]), forKey: "new")
            #expect(await cache.removeExpired() >= 1)
            #expect(await cache.count == 1)
        }
    }

    @Test func overTheLimitTrimsToHalfOldestFirst() async throws {
        let directory = try TemporaryDirectory()
        let clock = Clock()
        let entrySize = 1_000
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxSize: 10 * (entrySize + 200)),
                              now: { clock.now })
        for index in 0..<10 {
            try await cache.store(Data(repeating: UInt8(index), count: entrySize), forKey: "k\(index)")
            clock.advance(1)
        }
        _ = await cache.data(forKey: "k0")   // k0 becomes the most recently used
        clock.advance(1)
        #expect(await cache.count == 10)
        try await cache.store(Data(repeating: 99, count: entrySize * 3), forKey: "big")
        // Over 12,000 bytes: the least recently used go until the size is at most half the limit.
        #expect(await cache.totalSize <= 6_000)
        let big = await cache.data(forKey: "big"), k0 = await cache.data(forKey: "k0")
        let k1 = await cache.data(forKey: "k1"), k8 = await cache.data(forKey: "k8"), k9 = await cache.data(forKey: "k9")
        // About 14,600 bytes trimmed to at most 6,000: k1...k8 (least recently used) go; k9, k0
        // (read after the others were written) and big stay.
        #expect(big != nil && k0 != nil && k9 != nil, "the newest and the most recently read stay")
        #expect(k1 == nil && k8 == nil, "the least recently used go")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasPrefix(".") }
        let count = await cache.count
        #expect(files.count == count)
    }

    @Test func corruptTruncatedAndPlantedFilesAreMissesAndRemoved() async throws {
        let directory = try TemporaryDirectory()
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
        try await cache.store(Data(repeating: 7, count: 5_000), forKey: "flipped")
        try await cache.store(Data(repeating: 8, count: 5_000), forKey: "cut")
        var flipped = try Data(contentsOf: cache.path(forKey: "flipped"))
        flipped[100] ^= 0xFF
        try flipped.write(to: cache.path(forKey: "flipped"))
        let cut = try Data(contentsOf: cache.path(forKey: "cut"))
        try cut.prefix(cut.count / 2).write(to: cache.path(forKey: "cut"))
        try Data("not an entry".utf8).write(to: cache.path(forKey: "planted"))
        for key in ["flipped", "cut", "planted"] {
            #expect(await cache.data(forKey: key) == nil, "\(key)")
            #expect(!FileManager.default.fileExists(atPath: cache.path(forKey: key).path), "\(key) removed")
        }
    }

    @Test func leftoverTemporaryFilesAreCleanedAndIndexIsRebuilt() async throws {
        let directory = try TemporaryDirectory()
        let writer = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
        try await writer.store(Data([1, 2, 3]), forKey: "kept")
        try Data("half".utf8).write(to: directory.url.appendingPathComponent(".tmp-dead-writer"))
        let reopened = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
        #expect(await reopened.count == 1)
        #expect(await reopened.data(forKey: "kept") == Data([1, 2, 3]))
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent(".tmp-dead-writer").path))
    }

    /// A writer holds an exclusive `flock` on its temporary file until it is renamed into place:
    /// a lock works across PID namespaces (containers sharing a volume), where a pid in the name
    /// means nothing (or another process).
    @Test func aLiveWritersTemporaryFileSurvivesAnotherOpenWhateverItsPid() async throws {
        let directory = try TemporaryDirectory()
        // A writer in another PID namespace: its pid is dead here, but it holds its lock.
        let live = directory.url.appendingPathComponent(".tmp-2147483646-1")
        // A dead writer whose pid (in its own namespace) happens to be alive here.
        let dead = directory.url.appendingPathComponent(".tmp-\(getpid())-999999")
        try Data("in flight".utf8).write(to: live)
        try Data("abandoned".utf8).write(to: dead)
        let descriptor = open(live.path, O_RDWR | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX) == 0)
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
        #expect(await cache.count == 0)
        #expect(FileManager.default.fileExists(atPath: live.path), "a locked temporary file is a live write")
        #expect(!FileManager.default.fileExists(atPath: dead.path), "an unlocked one is a dead writer's")
        await cache.removeAll()
        #expect(FileManager.default.fileExists(atPath: live.path), "removeAll leaves a live write too")
    }

    @Test func imageExtensionsAreFoundWithoutParsingTheKey() {
        #expect(DiskCache.imageExtension(of: "https://example.com/a/photo.JPG?size=2#top") == "jpg")
        #expect(DiskCache.imageExtension(of: "https://example.com/a.b/photo") == nil)
        #expect(DiskCache.imageExtension(of: "https://example.com/archive.tar") == nil)
        #expect(DiskCache.imageExtension(of: "logo.webp") == "webp")
        #expect(DiskCache.imageExtension(of: "no-extension") == nil)
        #expect(DiskCache.imageExtension(of: "https://example.com/x.png-thumbnail(256)") == nil)
        #expect(DiskCache.imageExtension(of: "") == nil)
    }

    @Test func readOnlyDirectoriesAreSearchedAfterTheMainOne() async throws {
        let bundled = try TemporaryDirectory(), main = try TemporaryDirectory()
        let seeder = DiskCache(configuration: DiskCacheConfiguration(directory: bundled.url))
        try await seeder.store(Data("bundled".utf8), forKey: "logo")
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: main.url, readOnlyDirectories: [bundled.url]))
        #expect(await cache.data(forKey: "logo") == Data("bundled".utf8))
        let contains = await cache.contains(key: "logo"), count = await cache.count
        #expect(contains && count == 0)
        try await cache.store(Data("mine".utf8), forKey: "logo")
        #expect(await cache.data(forKey: "logo") == Data("mine".utf8))
        await cache.removeAll()
        #expect(await cache.data(forKey: "logo") == Data("bundled".utf8))
    }

    @Test func parallelReadersAndWriters() async throws {
        let directory = try TemporaryDirectory()
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxSize: 200_000))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<60 {
                        let key = "k\((step + worker) % 20)"
                        if step % 2 == 0 {
                            try await cache.store(Data(repeating: UInt8((step + worker) % 20), count: 4_000), forKey: key)
                        } else if let data = await cache.data(forKey: key) {
                            #expect(data == Data(repeating: data[0], count: 4_000) && "k\(data[0])" == key)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await cache.totalSize <= 200_000)
    }
}
