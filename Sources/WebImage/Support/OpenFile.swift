#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file open for reading, through the system calls themselves (FoundationEssentials has no
/// `FileHandle`); every failure is a ``WebImageError/fileSystem(_:)`` naming the path.
final class OpenFile {
    let path: String
    private let descriptor: Int32

    /// Opens `path` for reading.
    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.failure("cannot open", path) }
    }

    /// Takes over `descriptor`, open for reading; `path` names it in messages.
    init(descriptor: Int32, path: String) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The file's size in bytes, now.
    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.failure("cannot stat", path) }
        return Int64(info.st_size)
    }

    /// A strong entity tag for the file's contents now, from its status alone: inode, size and
    /// modification time to the nanosecond, so a file replaced (another inode) or rewritten (another
    /// time or size) gets another tag without being read. (The service keyed validator-less sources
    /// by a SHA-256 of their bytes: 0.67 ms of a 1 MP JPEG's 5.7 ms per request, issue #30.)
    func entityTag() throws -> String {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.failure("cannot stat", path) }
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        let parts = [UInt64(info.st_ino), UInt64(info.st_size), UInt64(bitPattern: Int64(modified.tv_sec)), UInt64(modified.tv_nsec)]
        return "\"" + parts.map { String($0, radix: 16) }.joined(separator: "-") + "\""
    }

    /// Reads the next bytes into `buffer`; how many (0 at the end of the file).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let got = systemRead(descriptor, buffer.baseAddress, buffer.count)
            if got >= 0 { return got }
            if errno != EINTR { throw Self.failure("cannot read", path) }
        }
    }

    private static func failure(_ what: String, _ path: String) -> WebImageError {
        .fileSystem("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

/// The system's `read` (inside ``OpenFile`` the name means its own `read(into:)`).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
