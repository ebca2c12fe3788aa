#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The total size of a cache directory's entries, shared by every process (and every
/// ``DiskCache``) using the directory: eight little-endian bytes in the file
/// ``DiskCacheFileNames/journal``, read and written under an exclusive `flock` of that file.
///
/// Each writer adds what it wrote and subtracts what it removed, so a process learns of the other
/// processes' writes without scanning the directory. When the total goes over the limit, the
/// trim measures the directory (under the same lock) and writes the measured total back, which
/// also corrects drift (a writer killed between its rename and its update).
final class DiskCacheJournal: Sendable {
    private let path: String
    private let mode: mode_t
    /// The open journal (-1 until opened). `flock` locks belong to an open file description, so
    /// they exclude other processes and other instances in this process but not the threads
    /// sharing this descriptor: holding this lock around the `flock` excludes those.
    private let descriptor = Locked<Int32>(-1)

    init(directoryPath: String, mode: mode_t) {
        path = directoryPath + DiskCacheFileNames.journal
        self.mode = mode
    }

    deinit {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
        }
    }

    /// Runs `body` with the recorded total (`nil` when the journal is new or unreadable) while
    /// holding the lock, then records the total `body` leaves. Returns `nil` without running
    /// `body` when there is no journal to lock: no directory yet, or something other than a
    /// regular file in its place.
    func update<Result: Sendable>(_ body: (inout Int?) -> Result) -> Result? {
        descriptor.withLock { descriptor -> Result? in
            if descriptor >= 0 {
                // Someone removed the directory (or the journal): start a new one.
                var info = stat()
                if fstat(descriptor, &info) != 0 || info.st_nlink == 0 {
                    close(descriptor)
                    descriptor = -1
                }
            }
            if descriptor < 0 {
                let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode)
                guard opened >= 0 else { return nil }
                var info = stat()
                guard fstat(opened, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                    close(opened)
                    return nil
                }
                descriptor = opened
            }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else { return nil }
            }
            defer { flock(descriptor, LOCK_UN) }
            var bytes = [UInt8](repeating: 0, count: 9)
            let count = pread(descriptor, &bytes, 9, 0)
            var total: Int?
            if count == 8, let value = bytes.littleEndianUInt64(at: 0), value <= UInt64(Int.max) { total = Int(value) }
            let result = body(&total)
            if let total {
                let value = UInt64(max(0, total))
                let encoded = (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
                if pwrite(descriptor, encoded, 8, 0) != 8 { _ = ftruncate(descriptor, 0) }
                if count > 8 { _ = ftruncate(descriptor, 8) }
            } else {
                _ = ftruncate(descriptor, 0)
            }
            return result
        }
    }
}
