#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
///   (the cache's own entry format), so a torn or corrupt file reads as a miss and is removed.
/// - Only files the cache made are indexed, counted, trimmed, expired or removed: entry names
///   (a SHA-256 in hex, with an image extension) and temporary names (`.tmp-…`). Anything else in
///   the directory is left alone. Directories are created 0700 and files 0600 by default.
/// - An in-memory index (size, last access, creation), built from a directory scan on first use,
///   answers reads. The size limit (``DiskCacheConfiguration/maxSize``) holds across processes
///   sharing the directory: every write and removal updates a size journal kept in the
///   directory and shared by every process using it, and when it goes over the limit the trim measures the directory,
///   not only this process's index, and removes the least recently used entries of every writer.
/// - A write in progress holds an exclusive `flock` on its temporary file, so a scan in any
///   process (in any PID namespace) removes only temporary files whose writer died.
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
    /// The directory's total size, shared with other processes.
    private let journal: DiskCacheJournal

    /// Creates a cache over `configuration.directory` (created on first write). `now` is the clock
    /// for ages and access times (tests pass their own).
    public init(configuration: DiskCacheConfiguration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.now = now
        directoryPath = Self.slashTerminated(configuration.directory.path)
        readOnlyPaths = configuration.readOnlyDirectories.map { Self.slashTerminated($0.path) }
        journal = DiskCacheJournal(directoryPath: directoryPath, mode: Self.mode(configuration.filePermissions))
    }

    private static func mode(_ permissions: Int) -> mode_t {
        mode_t(truncatingIfNeeded: permissions & 0o7777)
    }

    private static func slashTerminated(_ path: String) -> String {
        path.hasSuffix("/") ? path : path + "/"
    }

    /// A cache for `namespace` under the platform cache directory.
    /// - Throws: ``WebImageError/invalidNamespace(_:)`` for a namespace that is not one plain
    ///   directory name (see ``DiskCacheConfiguration/directory(namespace:root:)``).
    public convenience init(namespace: String) throws {
        self.init(configuration: try DiskCacheConfiguration(namespace: namespace))
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
        return DiskCacheFileNames.imageExtensions.contains(candidate) ? candidate : nil
    }

    /// Where the entry for `key` is (or would be) stored.
    public func path(forKey key: String) -> URL {
        URL(fileURLWithPath: directoryPath + fileName(forKey: key), isDirectory: false)
    }

    // MARK: Reading

    /// The stored bytes and metadata for `key`, from the cache directory or else the read-only ones.
    public func entry(forKey key: String) async -> (data: Data, metadata: ImageCacheMetadata)? {
        await runBlockingIO { [self] in
            entrySynchronously(forKey: key)
        }
    }

    /// The stored bytes for `key`.
    public func data(forKey key: String) async -> Data? {
        await runBlockingIO { [self] in
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
            if let file = readEntryFile(path, followingLinks: false), let entry = DiskCacheEntryFormat.decode(file) {
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
            if let file = readEntryFile(directory + name, followingLinks: true), let entry = DiskCacheEntryFormat.decode(file) { return entry }
        }
        return nil
    }

    /// Whether `key` has an unexpired entry (checked in the index; read-only directories by file).
    public func contains(key: String) async -> Bool {
        await runBlockingIO { [self] in
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
        try await runBlockingIO { [self] in
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
        let (temporary, descriptor) = try createTemporaryFile()
        let replaced: Int
        do {
            // Closing releases the writer's lock: only after the rename, so no scan takes the
            // file for a dead writer's leftover while it is still to be renamed.
            defer { close(descriptor) }
            if let failure = Self.writeAll(file, to: descriptor) {
                unlink(temporary)
                throw WebImageError.fileSystem("cannot write \(temporary): \(String(cString: strerror(failure)))")
            }
            replaced = Self.regularFileSize(atPath: directoryPath + name) ?? 0
            guard rename(temporary, directoryPath + name) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw WebImageError.fileSystem("cannot rename into \(configuration.directory.path): \(reason)")
            }
        }
        let date = now()
        index.withLock { index in
            index.set(name, Entry(size: file.count, accessed: date, created: date))
        }
        let added = file.count - replaced
        let shared: Int? = journal.update { total in
            // A new (or unreadable) journal starts from a measurement.
            total = total.map { max(0, $0 + added) } ?? measuredTotal(scanDirectory(removingAbandoned: false))
            return total ?? 0
        }
        let limit = configuration.maxSize
        if let shared {
            if limit > 0, shared > limit { trimMeasured(downTo: trimTarget, above: limit) }
        } else {
            // No journal (a file system without locks?): this process's index is all there is.
            let victims: [String] = index.withLock { index in trimVictims(&index) }
            removeFiles(victims, fromIndex: false)
        }
    }

    /// The size a trim over the limit leaves.
    private var trimTarget: Int {
        Int(Double(configuration.maxSize) * configuration.trimFraction)
    }

    /// Removes the entry for `key`.
    public func remove(key: String) async {
        await runBlockingIO { [self] in
            loadIndexIfNeeded()
            removeFiles([fileName(forKey: key)])
        }
    }

    /// Removes every entry (the read-only directories, files the cache did not make and the
    /// temporary files of writes in progress are untouched).
    public func removeAll() async {
        await runBlockingIO { [self] in
            index.withLock { index in
                index.entries = [:]
                index.totalSize = 0
                index.isLoaded = true
            }
            // Every entry on disk, the index's and those other processes wrote.
            var names: [String] = []
            forEachName { directory, name in
                if DiskCacheFileNames.isEntryName(name) {
                    names.append(name)
                } else if DiskCacheFileNames.isTemporaryName(name) {
                    _ = Self.removeIfAbandoned(directory, name)
                }
            }
            removeFiles(names, fromIndex: false)
        }
    }

    /// Removes entries older than ``DiskCacheConfiguration/maxAge``, then, when the directory
    /// (measured) is over the size limit, trims it. Returns how many entries were removed.
    @discardableResult
    public func removeExpired() async -> Int {
        await runBlockingIO { [self] in
            loadIndexIfNeeded()
            let date = now()
            let expired: [String] = index.withLock { index in
                index.entries.filter { isExpired($0.value, at: date) }.map(\.key)
            }
            removeFiles(expired)
            let limit = configuration.maxSize
            return expired.count + (limit > 0 ? trimMeasured(downTo: trimTarget, above: limit) : 0)
        }
    }

    /// Removes least recently used entries (of every process sharing the directory) until the
    /// measured size is at most `size` bytes. Returns how many were removed.
    @discardableResult
    public func trim(toSize size: Int) async -> Int {
        await runBlockingIO { [self] in
            loadIndexIfNeeded()
            return trimMeasured(downTo: max(0, size), above: max(0, size))
        }
    }

    // MARK: Size

    /// Bytes of all entries on disk (files, including metadata).
    public var totalSize: Int {
        get async {
            await runBlockingIO { [self] in
                loadIndexIfNeeded()
                return index.withLock { $0.totalSize }
            }
        }
    }

    /// The number of entries.
    public var count: Int {
        get async {
            await runBlockingIO { [self] in
                loadIndexIfNeeded()
                return index.withLock { $0.entries.count }
            }
        }
    }

    // MARK: Internals

    /// Creates a temporary file for a write, exclusively `flock`ed until closed, creating the
    /// cache directory (and its missing parents) when needed.
    private func createTemporaryFile() throws -> (path: String, descriptor: Int32) {
        var madeDirectory = false
        for _ in 0..<8 {
            let path = directoryPath + DiskCacheFileNames.temporaryName()
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, Self.mode(configuration.filePermissions))
            guard descriptor >= 0 else {
                let failure = errno
                if failure == EEXIST { continue }
                if failure == ENOENT, !madeDirectory {
                    // The directory is made on the first write (or again, if someone removed it).
                    madeDirectory = true
                    try Self.makeDirectories(String(directoryPath.dropLast()), mode: Self.mode(configuration.directoryPermissions))
                    continue
                }
                throw WebImageError.fileSystem("cannot write \(path): \(String(cString: strerror(failure)))")
            }
            // Where flock is unsupported, a scan cannot lock the file either, so it leaves it.
            while flock(descriptor, LOCK_EX) != 0, errno == EINTR {}
            // A scan that opened the file before the lock was taken may have removed it since.
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_nlink == 0 {
                close(descriptor)
                continue
            }
            return (path, descriptor)
        }
        throw WebImageError.fileSystem("cannot create a temporary file in \(configuration.directory.path)")
    }

    /// Creates `path` and its missing parents with `mode` (`FileManager` would make them 0755).
    private static func makeDirectories(_ path: String, mode: mode_t) throws {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        let failure = errno
        var parent = path
        while parent.hasSuffix("/") { parent.removeLast() }
        if let slash = parent.lastIndex(of: "/") { parent = String(parent[..<slash]) } else { parent = "" }
        guard failure == ENOENT, !parent.isEmpty else {
            throw WebImageError.fileSystem("cannot create \(path): \(String(cString: strerror(failure)))")
        }
        try makeDirectories(parent, mode: mode)
        guard mkdir(path, mode) == 0 || errno == EEXIST else {
            throw WebImageError.fileSystem("cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes all of `bytes`; returns the errno of a failure.
    ///
    /// Plain POSIX writes, because Foundation's `Data.write(to:)` calls `fsync` on Linux, which
    /// made every store wait for the disk. The cache does not need durability: an entry that a
    /// power cut leaves torn fails its checksum and reads as a miss; a killed process loses nothing
    /// already written.
    private static func writeAll(_ bytes: Data, to descriptor: Int32) -> Int32? {
        bytes.withUnsafeBytes { raw -> Int32? in
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

    /// Removes the temporary file `name` if no writer holds its lock (its writer died), whatever
    /// process or PID namespace the writer was in. Returns whether it was removed.
    private static func removeIfAbandoned(_ directory: Int32, _ name: String) -> Bool {
        // Non-blocking: a FIFO planted under a temporary name must not hang the scan.
        let descriptor = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        return unlinkat(directory, name, 0) == 0
    }

    /// The bytes of the entry file at `path`, or `nil` when it is not a regular file (a FIFO
    /// would block the read forever, a link could point at a device) or is larger than the whole
    /// cache may be (no trim lets such an entry survive): checked before any memory is taken.
    private func readEntryFile(_ path: String, followingLinks: Bool) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        let limit = configuration.maxSize > 0 ? configuration.maxSize : Int.max
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              info.st_size >= 0, Int(info.st_size) <= limit else { return nil }
        var data = Data(count: Int(info.st_size))
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            guard var cursor = raw.baseAddress else { return true }
            var remaining = raw.count
            while remaining > 0 {
                let count = read(descriptor, cursor, remaining)
                if count < 0, errno == EINTR { continue }
                // Shorter than its size said: being replaced or cut; the checksum would fail.
                guard count > 0 else { return false }
                cursor += count
                remaining -= count
            }
            return true
        }
        return complete ? data : nil
    }

    /// The size of the regular file at `path`, not following a symbolic link.
    private static func regularFileSize(atPath path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
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

    /// Removes entry files (and, by default, their index entries), and subtracts what they
    /// held from the shared journal.
    private func removeFiles(_ names: [String], fromIndex: Bool = true) {
        guard !names.isEmpty else { return }
        if fromIndex { index.withLock { index in names.forEach { index.remove($0) } } }
        var freed = 0
        for name in names where DiskCacheFileNames.isEntryName(name) {
            let size = Self.regularFileSize(atPath: directoryPath + name)
            if unlink(directoryPath + name) == 0 { freed += size ?? 0 }
        }
        if freed > 0 {
            _ = journal.update { total in total = total.map { max(0, $0 - freed) } }
        }
    }

    /// Measures the directory and, when its entries total more than `threshold` bytes, removes
    /// the least recently used of them (whoever wrote them) until at most `size` remain. Runs
    /// under the journal's lock, so concurrent trims in several processes do not all remove; the
    /// measured total corrects the journal. Returns how many entries were removed.
    @discardableResult
    private func trimMeasured(downTo size: Int, above threshold: Int) -> Int {
        let plan: (scanned: [String: Entry], victims: [String]) = journal.update { total in
            let plan = trimPlan(downTo: size, above: threshold)
            total = plan.remaining
            return (plan.scanned, plan.victims)
        } ?? {
            let plan = trimPlan(downTo: size, above: threshold)
            return (plan.scanned, plan.victims)
        }()
        let victims = Set(plan.victims)
        index.withLock { index in
            for name in plan.victims { index.remove(name) }
            // Entries other processes wrote become known, so reads and counts see them.
            for (name, entry) in plan.scanned where index.entries[name] == nil && !victims.contains(name) {
                index.set(name, entry)
            }
        }
        // Unlinked after the lock is released: the journal already counts them gone.
        for name in plan.victims { unlink(directoryPath + name) }
        return plan.victims.count
    }

    private func trimPlan(downTo size: Int, above threshold: Int) -> (scanned: [String: Entry], victims: [String], remaining: Int) {
        var scanned = scanDirectory(removingAbandoned: false)
        var remaining = measuredTotal(scanned)
        guard remaining > threshold else { return (scanned, [], remaining) }
        // This process knows its own reads better than the file dates (touched once a minute,
        // and by the real clock where the cache was given another).
        let known: [String: Date] = index.withLock { index in index.entries.mapValues(\.accessed) }
        for (name, date) in known where scanned[name] != nil {
            scanned[name]?.accessed = date
        }
        var victims: [String] = []
        for (name, entry) in scanned.sorted(by: { $0.value.accessed < $1.value.accessed }) {
            guard remaining > size else { break }
            remaining -= entry.size
            victims.append(name)
        }
        return (scanned, victims, remaining)
    }

    private func measuredTotal(_ entries: [String: Entry]) -> Int {
        entries.values.reduce(0) { $0 + $1.size }
    }

    /// Records the access time in the file's modification date, so LRU order survives a restart.
    private func touch(_ path: String, _ date: Date) {
        let seconds = date.timeIntervalSince1970
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9)),
                     timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Scans the directory once: sizes and dates of entries, and leftover temporary files of
    /// writers that died mid-write (removed). The scan runs under the journal's lock and records
    /// the measured total, so the journal starts (or restarts) from the truth.
    private func loadIndexIfNeeded() {
        guard !index.withLock({ $0.isLoaded }) else { return }
        var scanned: [String: Entry] = journal.update { total in
            let scanned = scanDirectory(removingAbandoned: true)
            total = measuredTotal(scanned)
            return scanned
        } ?? scanDirectory(removingAbandoned: true)
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

    /// The entries in the directory, by name: sizes and dates. POSIX `readdir` and `fstatat`,
    /// since a cache can hold a hundred thousand files and FileManager's per-file resource values
    /// cost a hundred times more. Names the cache did not make are skipped.
    private func scanDirectory(removingAbandoned: Bool) -> [String: Entry] {
        var scanned: [String: Entry] = [:]
        forEachName { directory, name in
            if DiskCacheFileNames.isTemporaryName(name) {
                if removingAbandoned { _ = Self.removeIfAbandoned(directory, name) }
                return
            }
            guard DiskCacheFileNames.isEntryName(name), let attributes = Self.attributes(directory, name) else { return }
            scanned[name] = Entry(size: attributes.size, accessed: attributes.modified, created: attributes.created)
        }
        return scanned
    }

    /// Calls `body` with the directory's descriptor and each name in it.
    private func forEachName(_ body: (Int32, String) -> Void) {
        guard let directory = opendir(configuration.directory.path) else { return }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            body(descriptor, name)
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
