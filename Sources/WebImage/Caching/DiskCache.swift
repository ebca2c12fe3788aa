#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A crash-safe, size- and age-limited cache of encoded image bytes on disk.
///
/// - Files are named by the SHA-256 of the key (never the key itself: no path tricks, no
///   collisions), keeping the key's image extension.
/// - Writes go to a temporary file in the same directory and are renamed into place, so a reader
///   sees the old entry or the new one, never half of one; each file carries a checksum trailer
///   (``DiskCacheEntryFormat``), so a torn or corrupt file reads as a miss and is removed.
/// - An in-memory index (size, last access, creation), built from a directory scan on first use,
///   enforces ``DiskCacheConfiguration/maxSize`` as entries are written: when the size goes over,
///   the least recently used entries leave the index at once and their files are deleted in the
///   background, so readers never wait for a trim.
/// - All file I/O runs on Dispatch's utility threads, never on Swift's cooperative pool: a file
///   creation can wait milliseconds for the disk, and a cooperative thread held that long
///   stalls every task queued behind it. Many reads run in parallel, since the index lock is held
///   only for bookkeeping.
public final class DiskCache: Sendable {
    /// Where and how much.
    public let configuration: DiskCacheConfiguration
    private let now: @Sendable () -> Date
    /// `configuration.directory` and the read-only directories as paths ending in "/". File
    /// paths are built by appending names to these rather than with
    /// `URL.appendingPathComponent`, which asks the file system whether the result is a
    /// directory: an `fstatat` on every cache access.
    private let directoryPath: String
    private let readOnlyPaths: [String]

    private struct Entry {
        var size: Int
        var accessed: Date
        var created: Date
    }

    private struct Index {
        var isLoaded = false
        var entries: [String: Entry] = [:]
        var totalSize = 0

        mutating func set(_ name: String, _ entry: Entry) {
            totalSize += entry.size - (entries[name]?.size ?? 0)
            entries[name] = entry
        }

        mutating func remove(_ name: String) {
            if let old = entries.removeValue(forKey: name) { totalSize -= old.size }
        }
    }

    /// Guards the index; no file I/O happens while it is held.
    private let index = Locked(Index())

    /// Image extensions kept in file names.
    static let imageExtensions: Set = ["jpg", "jpeg", "png", "gif", "webp", "heic", "heif", "avif", "bmp", "ico"]

    /// Creates a cache over `configuration.directory` (created on first write). `now` is the clock
    /// for ages and access times (tests pass their own).
    public init(configuration: DiskCacheConfiguration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.now = now
        directoryPath = Self.slashTerminated(configuration.directory.path)
        readOnlyPaths = configuration.readOnlyDirectories.map { Self.slashTerminated($0.path) }
    }

    private static func slashTerminated(_ path: String) -> String {
        path.hasSuffix("/") ? path : path + "/"
    }

    /// A cache for `namespace` under the platform cache directory.
    public convenience init(namespace: String) {
        self.init(configuration: DiskCacheConfiguration(namespace: namespace))
    }

    // MARK: Names

    /// The file name for `key`: the SHA-256 of the key in hex, plus the key's image extension.
    public func fileName(forKey key: String) -> String {
        let hash = SHA256.hex(of: Array(key.utf8))
        guard let pathExtension = Self.imageExtension(of: key) else { return hash }
        return "\(hash).\(pathExtension)"
    }

    /// The lowercased extension of the key's last path component, when it is an image extension.
    /// A plain scan rather than URL parsing, which cost more than the hash on every cache access.
    static func imageExtension(of key: String) -> String? {
        let bytes = key.utf8
        // The path ends at the query or fragment.
        let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        var dot: String.UTF8View.Index?
        var index = end
        while index > bytes.startIndex {
            index = bytes.index(before: index)
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") { break }
            if byte == UInt8(ascii: ".") { dot = index; break }
        }
        guard let dot else { return nil }
        let candidate = String(decoding: bytes[bytes.index(after: dot)..<end], as: UTF8.self).lowercased()
        return imageExtensions.contains(candidate) ? candidate : nil
    }

    /// Where the entry for `key` is (or would be) stored.
    public func path(forKey key: String) -> URL {
        URL(fileURLWithPath: directoryPath + fileName(forKey: key), isDirectory: false)
    }

    // MARK: Reading

    /// The stored bytes and metadata for `key`, from the cache directory or else the read-only ones.
    public func entry(forKey key: String) async -> (data: Data, metadata: ImageCacheMetadata)? {
        await runBlocking(qos: .utility) { [self] in
            entrySynchronously(forKey: key)
        }
    }

    /// The stored bytes for `key`.
    public func data(forKey key: String) async -> Data? {
        await runBlocking(qos: .utility) { [self] in
            entrySynchronously(forKey: key)?.data
        }
    }

    /// The entry for `key`, read on the calling thread (for callers that must not suspend).
    public func entrySynchronously(forKey key: String) -> (data: Data, metadata: ImageCacheMetadata)? {
        loadIndexIfNeeded()
        let name = fileName(forKey: key)
        let path = directoryPath + name
        let date = now()
        let state: (known: Bool, expired: Bool) = index.withLock { index in
            guard let entry = index.entries[name] else { return (false, false) }
            return (true, isExpired(entry, at: date))
        }
        if state.expired {
            removeFiles([name])
        } else if state.known || access(path, F_OK) == 0 {
            if let file = try? Data(contentsOf: URL(fileURLWithPath: path, isDirectory: false)), let entry = DiskCacheEntryFormat.decode(file) {
                let previousAccess: Date? = index.withLock { index in
                    let previous = index.entries[name]
                    index.set(name, Entry(size: file.count, accessed: date, created: previous?.created ?? entry.metadata.storedDate))
                    return previous?.accessed
                }
                // The file's date carries the access time across restarts; minute precision is
                // plenty for LRU order, and skipping the write keeps hot reads to one syscall.
                if previousAccess.map({ date.timeIntervalSince($0) > 60 }) ?? true { touch(path, date) }
                return entry
            }
            // Torn, truncated or planted: not an entry. Remove it so it is not read again.
            removeFiles([name])
        }
        for directory in readOnlyPaths {
            let candidate = URL(fileURLWithPath: directory + name, isDirectory: false)
            if let file = try? Data(contentsOf: candidate), let entry = DiskCacheEntryFormat.decode(file) { return entry }
        }
        return nil
    }

    /// Whether `key` has an unexpired entry (checked in the index; read-only directories by file).
    public func contains(key: String) async -> Bool {
        await runBlocking(qos: .utility) { [self] in
            loadIndexIfNeeded()
            let name = fileName(forKey: key)
            let date = now()
            if index.withLock({ index in index.entries[name].map { !isExpired($0, at: date) } ?? false }) { return true }
            return readOnlyPaths.contains { access($0 + name, F_OK) == 0 }
        }
    }

    // MARK: Writing

    /// Stores `data` with `metadata` under `key`, atomically, then trims if over the size limit.
    /// - Throws: ``WebImageError/fileSystem(_:)`` when the file cannot be written.
    public func store(_ data: Data, metadata: ImageCacheMetadata = ImageCacheMetadata(), forKey key: String) async throws {
        try await runBlocking(qos: .utility) { [self] in
            try storeSynchronously(data, metadata: metadata, forKey: key)
        }
    }

    /// ``store(_:metadata:forKey:)`` on the calling thread.
    public func storeSynchronously(_ data: Data, metadata: ImageCacheMetadata = ImageCacheMetadata(), forKey key: String) throws {
        loadIndexIfNeeded()
        let name = fileName(forKey: key)
        let file: Data
        do {
            file = try DiskCacheEntryFormat.encode(data, metadata: metadata)
        } catch {
            throw WebImageError.fileSystem("cannot encode metadata: \(error)")
        }
        let directory = configuration.directory
        let temporary = directoryPath + Self.temporaryName()
        var failure = Self.writeNewFile(file, atPath: temporary)
        if failure == ENOENT {
            // The directory is made on the first write (or again, if someone removed it).
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            failure = Self.writeNewFile(file, atPath: temporary)
        }
        if let failure {
            unlink(temporary)
            throw WebImageError.fileSystem("cannot write \(temporary): \(String(cString: strerror(failure)))")
        }
        guard rename(temporary, directoryPath + name) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw WebImageError.fileSystem("cannot rename into \(directory.path): \(reason)")
        }
        let date = now()
        let victims: [String] = index.withLock { index in
            index.set(name, Entry(size: file.count, accessed: date, created: date))
            return trimVictims(&index)
        }
        removeFiles(victims, fromIndex: false)
    }

    /// Removes the entry for `key`.
    public func remove(key: String) async {
        await runBlocking(qos: .utility) { [self] in
            loadIndexIfNeeded()
            removeFiles([fileName(forKey: key)])
        }
    }

    /// Removes every entry (the read-only directories are untouched).
    public func removeAll() async {
        await runBlocking(qos: .utility) { [self] in
            let names = index.withLock { index -> [String] in
                let names = Array(index.entries.keys)
                index.entries = [:]
                index.totalSize = 0
                index.isLoaded = true
                return names
            }
            removeFiles(names, fromIndex: false)
            // Files the index never knew about (written by another process) go too.
            if let others = try? FileManager.default.contentsOfDirectory(atPath: configuration.directory.path) {
                removeFiles(others, fromIndex: false)
            }
        }
    }

    /// Removes entries older than ``DiskCacheConfiguration/maxAge``, then trims to the size limit.
    /// Returns how many entries were removed.
    @discardableResult
    public func removeExpired() async -> Int {
        await runBlocking(qos: .utility) { [self] in
            loadIndexIfNeeded()
            let date = now()
            let victims: [String] = index.withLock { index in
                let expired = index.entries.filter { isExpired($0.value, at: date) }.map(\.key)
                expired.forEach { index.remove($0) }
                return expired + trimVictims(&index)
            }
            removeFiles(victims, fromIndex: false)
            return victims.count
        }
    }

    /// Removes least recently used entries until the size is at most `size` bytes. Returns how
    /// many were removed.
    @discardableResult
    public func trim(toSize size: Int) async -> Int {
        await runBlocking(qos: .utility) { [self] in
            loadIndexIfNeeded()
            let victims: [String] = index.withLock { index in
                guard index.totalSize > size else { return [] }
                return leastRecentlyUsed(&index, downTo: size)
            }
            removeFiles(victims, fromIndex: false)
            return victims.count
        }
    }

    // MARK: Size

    /// Bytes of all entries on disk (files, including metadata).
    public var totalSize: Int {
        get async {
            await runBlocking(qos: .utility) { [self] in
                loadIndexIfNeeded()
                return index.withLock { $0.totalSize }
            }
        }
    }

    /// The number of entries.
    public var count: Int {
        get async {
            await runBlocking(qos: .utility) { [self] in
                loadIndexIfNeeded()
                return index.withLock { $0.entries.count }
            }
        }
    }

    // MARK: Internals

    /// Creates `path` and writes `bytes` into it; returns the errno of a failure.
    ///
    /// Plain POSIX writes, because Foundation's `Data.write(to:)` calls `fsync` on Linux, which
    /// made every store wait for the disk. The cache does not need durability: an entry that a
    /// power cut leaves torn fails its checksum and reads as a miss; a killed process loses nothing
    /// already written.
    private static func writeNewFile(_ bytes: Data, atPath path: String) -> Int32? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        return bytes.withUnsafeBytes { raw -> Int32? in
            guard var cursor = raw.baseAddress else { return nil }
            var remaining = raw.count
            while remaining > 0 {
                let written = write(descriptor, cursor, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                // A regular file that takes no bytes is full (or broken): never spin on it.
                if written == 0 { return EIO }
                cursor += written
                remaining -= written
            }
            return nil
        }
    }

    private static let temporaryCounter = Atomic<UInt64>(0)

    /// A temporary file name unique to this process and write: another process has another pid,
    /// and a dead writer's leftovers are removed by the next scan (they start with `.tmp-`).
    private static func temporaryName() -> String {
        let serial = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ".tmp-\(getpid())-\(serial)"
    }

    /// Whether a temporary file may still be renamed into place by a running writer (this
    /// process or another): its pid is alive. Only a dead writer's leftovers are removed.
    private static func isTemporaryOfLiveWriter(_ name: String) -> Bool {
        let fields = name.dropFirst(".tmp-".count).split(separator: "-")
        guard fields.count == 2, let pid = pid_t(fields[0]), pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    private func isExpired(_ entry: Entry, at date: Date) -> Bool {
        guard let maxAge = configuration.maxAge else { return false }
        let reference = configuration.ageBasis == .lastAccess ? entry.accessed : entry.created
        let seconds = Double(maxAge.components.seconds) + Double(maxAge.components.attoseconds) / 1e18
        return date.timeIntervalSince(reference) > seconds
    }

    /// Entries to drop when over the size limit (already removed from the index).
    private func trimVictims(_ index: inout Index) -> [String] {
        let limit = configuration.maxSize
        guard limit > 0, index.totalSize > limit else { return [] }
        return leastRecentlyUsed(&index, downTo: Int(Double(limit) * configuration.trimFraction))
    }

    private func leastRecentlyUsed(_ index: inout Index, downTo size: Int) -> [String] {
        var victims: [String] = []
        for (name, _) in index.entries.sorted(by: { $0.value.accessed < $1.value.accessed }) {
            guard index.totalSize > size else { break }
            index.remove(name)
            victims.append(name)
        }
        return victims
    }

    private func removeFiles(_ names: [String], fromIndex: Bool = true) {
        if fromIndex { index.withLock { index in names.forEach { index.remove($0) } } }
        for name in names {
            unlink(directoryPath + name)
        }
    }

    /// Records the access time in the file's modification date, so LRU order survives a restart.
    private func touch(_ path: String, _ date: Date) {
        let seconds = date.timeIntervalSince1970
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9)),
                     timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Scans the directory once: sizes and dates of entries, and leftover temporary files of
    /// writers that died mid-write (removed). POSIX `readdir` and `fstatat`, since a cache can hold
    /// a hundred thousand files and FileManager's per-file resource values cost a hundred times more.
    private func loadIndexIfNeeded() {
        guard !index.withLock({ $0.isLoaded }) else { return }
        var scanned: [String: Entry] = [:]
        let path = configuration.directory.path
        if let directory = opendir(path) {
            defer { closedir(directory) }
            let descriptor = dirfd(directory)
            while let item = readdir(directory) {
                let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                if name.hasPrefix(".tmp-") {
                    if !Self.isTemporaryOfLiveWriter(name) { unlinkat(descriptor, name, 0) }
                    continue
                }
                guard let attributes = Self.attributes(descriptor, name) else { continue }
                scanned[name] = Entry(size: attributes.size, accessed: attributes.modified, created: attributes.created)
            }
        }
        index.withLock { index in
            guard !index.isLoaded else { return }
            // Entries written while the scan ran are newer than what the scan saw.
            for (name, entry) in index.entries { scanned[name] = entry }
            index.entries = [:]
            index.totalSize = 0
            for (name, entry) in scanned { index.set(name, entry) }
            index.isLoaded = true
        }
    }

    /// Size, modification time (the last access, see `touch`) and birth time of a regular file.
    private static func attributes(_ directory: Int32, _ name: String) -> (size: Int, modified: Date, created: Date)? {
        #if os(Linux)
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        // stat has no birth time on Linux (statx has, but Swift's Glibc module does not export it):
        // after a restart, the age of an entry "since creation" is measured from its last access.
        return (Int(info.st_size), modified, modified)
        #else
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9)
        let created = Date(timeIntervalSince1970: Double(info.st_birthtimespec.tv_sec) + Double(info.st_birthtimespec.tv_nsec) / 1e9)
        return (Int(info.st_size), modified, created)
        #endif
    }
}
