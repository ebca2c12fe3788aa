#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The directory `local:///PATH` URLs are read from, and the only place they can reach.
///
/// A path resolves inside the root or is refused (``WebImageError/rejected(_:)``) before anything
/// is opened: a `.` or `..` segment, raw or percent-encoded (`%2e%2e`), an encoded slash or
/// backslash (`%2f`, `%5c`), a NUL, a host (`local://host/...`), or a symbolic link whose target is
/// outside the root. Links inside the root are followed: the path is resolved first, checked to be
/// inside the root, then opened component by component with `O_NOFOLLOW`, so a link swapped in
/// between the check and the open fails the open instead of leading out. The file is opened with
/// `O_NONBLOCK` (a FIFO then opens at once rather than waiting for a writer) and must be a regular
/// file (`fstat` after the open); anything else, and a missing file, is a
/// ``WebImageError/fileSystem(_:)``. Messages name the URL's path, never the root's.
package struct LocalRoot: Sendable {
    /// The root as configured; resolved (symbolic links and all) at every open, so a root that
    /// is itself a link keeps working when it is repointed.
    package let directory: String

    package init(directory: String) {
        self.directory = directory
    }

    /// Whether `url` is a `local:` URL.
    package static func isLocal(_ url: URL) -> Bool { url.scheme?.lowercased() == "local" }

    /// The regular file `url` names, open for reading.
    /// - Throws: ``WebImageError/rejected(_:)`` for a path that is not inside the root,
    ///   ``WebImageError/fileSystem(_:)`` for one that is no readable regular file.
    func open(_ url: URL) throws -> OpenFile {
        let shown = url.path(percentEncoded: true)
        let segments = try Self.segments(of: url)
        guard let rootPointer = realpath(directory, nil) else { throw WebImageError.fileSystem("the local root cannot be opened") }
        let root = String(cString: rootPointer)
        free(rootPointer)
        let inside = root == "/" ? "/" : root + "/"
        guard let resolvedPointer = realpath(inside + segments.joined(separator: "/"), nil) else {
            throw WebImageError.fileSystem("no file at \(shown): \(String(cString: strerror(errno)))")
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        guard resolved.hasPrefix(inside), resolved.count > inside.count else {
            throw WebImageError.rejected("\(shown) leads out of the local root")
        }
        let components = resolved.dropFirst(inside.count).split(separator: "/").map(String.init)
        var directoryDescriptor = openDirectory(root)
        guard directoryDescriptor >= 0 else { throw WebImageError.fileSystem("the local root cannot be opened") }
        for component in components.dropLast() {
            let next = openat(directoryDescriptor, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            close(directoryDescriptor)
            guard next >= 0 else { throw WebImageError.fileSystem("no file at \(shown): it changed while it was opened") }
            directoryDescriptor = next
        }
        let descriptor = openat(directoryDescriptor, components[components.count - 1],
                                O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        close(directoryDescriptor)
        guard descriptor >= 0 else { throw WebImageError.fileSystem("\(shown) cannot be opened: \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
            close(descriptor)
            throw WebImageError.fileSystem("\(shown) is not a regular file")
        }
        return OpenFile(descriptor: descriptor, path: shown)
    }

    /// The decoded segments of `url`'s path.
    /// - Throws: ``WebImageError/rejected(_:)`` for a path that could mean a place outside the root.
    package static func segments(of url: URL) throws -> [String] {
        let raw = url.path(percentEncoded: true)
        func refuse(_ why: String) -> WebImageError { .rejected("local source \(raw): \(why)") }
        guard url.host(percentEncoded: true)?.isEmpty ?? true else { throw refuse("a local URL has no host (local:///PATH)") }
        guard url.user == nil, url.port == nil else { throw refuse("a local URL has no user or port") }
        let lower = raw.lowercased()
        guard !lower.contains("%2f"), !lower.contains("%5c"), !raw.contains("\\") else { throw refuse("an encoded slash or a backslash") }
        guard let bytes = try? DataURLLoader.percentDecodedBytes(raw) else { throw refuse("a malformed percent-encoding") }
        guard !bytes.contains(0) else { throw refuse("a NUL") }
        let decoded = String(decoding: bytes, as: UTF8.self)
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else { throw refuse("a dot segment") }
        guard !segments.isEmpty else { throw refuse("it names no file") }
        return segments
    }
}

/// The system's `open` for a directory (inside ``LocalRoot`` the name means its own `open(_:)`).
private func openDirectory(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
}
