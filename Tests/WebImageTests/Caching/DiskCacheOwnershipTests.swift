import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import WebImage

/// The disk cache touches only files it made: its hashed entry names and its temporary names.
/// Whatever else lives in (or next to) its directory survives trimming, expiry and clearing.
@Suite struct DiskCacheOwnershipTests {
    /// Writes `text` to `name` in `directory`, dated in the year 2000 (older than any entry).
    @discardableResult
    private func plantForeignFile(_ name: String, in directory: URL, size: Int = 50_000) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(repeating: 0x41, count: size).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 946_684_800)], ofItemAtPath: url.path)
        return url
    }

    @Test func removeAllLeavesFilesTheCacheDidNotMake() async throws {
        let directory = try TemporaryDirectory()
        let notes = try plantForeignFile("notes.txt", in: directory.url)
        let lookalike = try plantForeignFile("holiday.png", in: directory.url)
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
        try await cache.store(Data([1, 2, 3]), forKey: "https://example.com/a.png")
        try await cache.store(Data([4, 5, 6]), forKey: "b")
        await cache.removeAll()
        #expect(FileManager.default.fileExists(atPath: notes.path), "a foreign file survives removeAll")
        #expect(FileManager.default.fileExists(atPath: lookalike.path), "an image the cache did not name survives removeAll")
        #expect(await cache.data(forKey: "b") == nil && cache.path(forKey: "b").path.isEmpty == false)
        #expect(!FileManager.default.fileExists(atPath: cache.path(forKey: "b").path))
        #expect(!FileManager.default.fileExists(atPath: cache.path(forKey: "https://example.com/a.png").path))
    }

    @Test func trimmingNeitherCountsNorDeletesForeignFiles() async throws {
        let directory = try TemporaryDirectory()
        let notes = try plantForeignFile("notes.txt", in: directory.url)
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxSize: 10_000))
        try await cache.store(Data(repeating: 1, count: 1_000), forKey: "one")
        #expect(FileManager.default.fileExists(atPath: notes.path), "the store's trim leaves a foreign file")
        #expect(await cache.data(forKey: "one") != nil, "a foreign file does not count against the limit")
        #expect(await cache.count == 1)
        await cache.trim(toSize: 0)
        #expect(FileManager.default.fileExists(atPath: notes.path), "trim(toSize:) leaves a foreign file")
        #expect(await cache.count == 0)
    }

    @Test func expiryLeavesForeignFiles() async throws {
        let directory = try TemporaryDirectory()
        let notes = try plantForeignFile("notes.txt", in: directory.url)
        let config = try plantForeignFile(".config", in: directory.url, size: 10)
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxAge: .seconds(86_400)))
        try await cache.store(Data([9]), forKey: "fresh")
        #expect(await cache.removeExpired() == 0)
        #expect(FileManager.default.fileExists(atPath: notes.path) && FileManager.default.fileExists(atPath: config.path))
        #expect(await cache.data(forKey: "fresh") == Data([9]))
    }

    @Test func badNamespacesAreRefusedWithATypedError() throws {
        let root = URL(fileURLWithPath: "/tmp/webimage-namespace-root", isDirectory: true)
        for namespace in [".", "..", "", "a/b", "../x", "/"] {
            #expect(throws: WebImageError.self, "\(namespace)") { try DiskCacheConfiguration(namespace: namespace, root: root) }
            #expect(throws: WebImageError.self, "\(namespace)") { try DiskCacheConfiguration.directory(namespace: namespace, root: root) }
        }
        let fine = try DiskCacheConfiguration.directory(namespace: "thumbnails-v2", root: root)
        #expect(fine.path == "/tmp/webimage-namespace-root/thumbnails-v2")
        #expect(try DiskCacheConfiguration.directory(namespace: "..hidden", root: root).lastPathComponent == "..hidden")
    }

    @Test(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
    func cacheClearRefusesANamespaceThatClimbsOut() async throws {
        let top = try TemporaryDirectory()
        let root = top.url.appendingPathComponent("cache", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let precious = try plantForeignFile("precious.txt", in: top.url)
        let sibling = top.url.appendingPathComponent("sibling", isDirectory: true)
        try FileManager.default.createDirectory(at: sibling, withIntermediateDirectories: true)
        let siblingFile = try plantForeignFile("kept.jpg", in: sibling)
        for namespace in ["..", ".", ""] {
            let run = try await runCLI(["cache", "clear", "--cache-dir", root.path, "--namespace", namespace])
            #expect(run.status != 0, "namespace '\(namespace)' is refused")
            #expect(run.stderr.contains("namespace"), "the error names the namespace: \(run.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: precious.path))
        #expect(FileManager.default.fileExists(atPath: siblingFile.path))
    }

    @Test func directoriesAndFilesArePrivate() async throws {
        let directory = try TemporaryDirectory()
        let place = directory.url.appendingPathComponent("swift-webimage/private", isDirectory: true)
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: place))
        try await cache.store(Data("secret".utf8), forKey: "https://example.com/with-credentials.jpg")
        func mode(_ url: URL) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) & 0o777
        }
        #expect(try mode(place) == 0o700)
        #expect(try mode(place.deletingLastPathComponent()) == 0o700, "directories the cache creates on the way too")
        #expect(try mode(cache.path(forKey: "https://example.com/with-credentials.jpg")) == 0o600)
    }

    /// Sum of the sizes of the regular files in `directory` (what `du` would count, roughly).
    static func measuredSize(_ directory: URL) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).reduce(0) { total, name in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            guard attributes[.type] as? FileAttributeType == .typeRegular, !name.hasPrefix(".") else { return total }
            return total + ((attributes[.size] as? Int) ?? 0)
        }
    }

    @Test func twoCachesOnOneDirectoryKeepOneSizeLimit() async throws {
        let directory = try TemporaryDirectory()
        let limit = 10_000
        let first = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxSize: limit))
        let second = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxSize: limit))
        // Both have looked at the (empty) directory before either writes, as two processes would.
        #expect(await first.count == 0)
        #expect(await second.count == 0)
        for index in 0..<8 {
            try await first.store(Data(repeating: 1, count: 1_000), forKey: "first-\(index)")
            try await second.store(Data(repeating: 2, count: 1_000), forKey: "second-\(index)")
            #expect(try Self.measuredSize(directory.url) <= limit, "after write \(index)")
        }
        #expect(try Self.measuredSize(directory.url) <= limit)
        #expect(await second.data(forKey: "second-7") != nil, "the newest entry stays")
    }

    /// Two real `webimage` processes write to one directory at once, each keeping within the
    /// limit on its own; together they must too.
    @Test(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
    func twoProcessesOnOneDirectoryKeepOneSizeLimit() async throws {
        let directory = try TemporaryDirectory()
        let limit = 2_000_000
        var writers: [(process: Process, input: Pipe, output: Pipe)] = []
        for prefix in ["first-", "second-"] {
            let process = Process()
            process.executableURL = CrashSafetyTests.binary
            process.arguments = ["cache", "_write-loop", "--cache-dir", directory.url.path, "--namespace", "shared",
                                 "--max-size", "\(limit)", "--key-prefix", prefix, "--keys", "40", "--count", "40", "--wait-for-start"]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            writers.append((process, input, output))
        }
        // Both have opened the cache (scanned the empty directory) before either writes.
        for writer in writers {
            var line = Data()
            while !line.contains(10) {
                let chunk = writer.output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            #expect(String(decoding: line, as: UTF8.self).hasPrefix("ready"))
        }
        for writer in writers { writer.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        for writer in writers {
            let written = writer.output.fileHandleForReading.readDataToEndOfFile()
            await writer.process.exited()
            #expect(writer.process.terminationStatus == 0)
            #expect(written.filter { $0 == 10 }.count == 40)
        }
        let size = try Self.measuredSize(directory.url.appendingPathComponent("shared"))
        #expect(size <= limit && size > 0, "\(size) bytes on disk")
    }

    /// Whoever can write to the cache directory controls what sits under an entry's name: a FIFO
    /// (a read would block forever), a link to a file outside, a file larger than the cache.
    @Test func hostileFilesUnderEntryNamesAreMisses() async throws {
        let directory = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        let target = try plantForeignFile("target.txt", in: outside.url, size: 100)
        let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url, maxSize: 10_000))
        #expect(mkfifo(cache.path(forKey: "fifo").path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(at: cache.path(forKey: "link"), withDestinationURL: target)
        try Data(repeating: 0, count: 20_000).write(to: cache.path(forKey: "huge"))
        for key in ["fifo", "link", "huge"] {
            #expect(await cache.data(forKey: key) == nil, "\(key)")
        }
        #expect(FileManager.default.fileExists(atPath: target.path), "a link's target is never deleted")
        #expect(await cache.count == 0)
    }
}
