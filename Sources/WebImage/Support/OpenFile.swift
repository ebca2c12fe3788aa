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

    deinit { close(descriptor) }

    /// The file's size in bytes, now.
    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.failure("cannot stat", path) }
        return Int64(info.st_size)
    }

    /// Up to `count` of the next bytes; empty at the end of the file.
    func read(upTo count: Int) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        while true {
            let got = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, count) }
            if got >= 0 {
                chunk.removeLast(count - got)
                return chunk
            }
            if errno != EINTR { throw Self.failure("cannot read", path) }
        }
    }

    private static func failure(_ what: String, _ path: String) -> WebImageError {
        .fileSystem("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

/// The system's `read` (inside ``OpenFile`` the name means its own `read(upTo:)`).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
