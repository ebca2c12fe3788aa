#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Limits and places of a ``DiskCache``.
public struct DiskCacheConfiguration: Sendable {
    /// What an entry's age is measured from.
    public enum AgeBasis: Sendable, Hashable {
        /// The last time it was read or written (SDWebImage's default).
        case lastAccess
        /// The time it was written.
        case creation
    }

    /// The directory entries are written to (created when missing).
    public var directory: URL
    /// Directories searched, read-only, after ``directory`` (pre-bundled images).
    public var readOnlyDirectories: [URL]
    /// Entries older than this are expired; `nil` keeps them forever. Default: one week.
    public var maxAge: Duration?
    /// What ``maxAge`` is measured from.
    public var ageBasis: AgeBasis
    /// The most bytes kept; 0 means unlimited. Default: 512 MiB.
    public var maxSize: Int
    /// When the size goes over ``maxSize``, the least recently used entries are removed until the
    /// size is at most this fraction of it (SDWebImage's rule: half).
    public var trimFraction: Double
    /// The mode of entry files. Default 0600: images fetched with credentials stay private to
    /// the user (the process's umask can only remove bits).
    public var filePermissions: Int
    /// The mode of the directories the cache creates (its own and missing parents). Default 0700.
    public var directoryPermissions: Int

    /// The cache directory of the platform: `$XDG_CACHE_HOME` or `~/.cache` on Linux, the
    /// user's Caches folder on Apple platforms.
    public static var platformCacheDirectory: URL {
        #if os(Linux)
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache", isDirectory: true)
        #else
        return FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        #endif
    }

    /// The directory of a namespace: `<platform cache>/swift-webimage/<namespace>` (or
    /// `<root>/<namespace>`). Characters other than letters, digits, `-`, `_` and `.` become `_`.
    /// - Throws: ``WebImageError/invalidNamespace(_:)`` when the namespace is empty, `.` or `..`,
    ///   contains `/` or a NUL, or is longer than 255 bytes: it must name one directory inside the
    ///   root, never the root itself or a place outside it (`cache clear --namespace ..` would
    ///   otherwise clear the parent).
    public static func directory(namespace: String, root: URL? = nil) throws -> URL {
        try validate(namespace: namespace)
        let safe = namespace.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" }
        return (root ?? platformCacheDirectory.appendingPathComponent("swift-webimage", isDirectory: true))
            .appendingPathComponent(String(safe), isDirectory: true)
    }

    /// Throws ``WebImageError/invalidNamespace(_:)`` unless `namespace` names one directory (see
    /// ``directory(namespace:root:)``).
    public static func validate(namespace: String) throws {
        let reason: String? = switch namespace {
        case "": "is empty"
        case ".": "would be the cache root itself"
        case "..": "would be the parent of the cache root"
        case _ where namespace.contains("/"): "contains '/'"
        case _ where namespace.utf8.contains(0): "contains a NUL byte"
        case _ where namespace.utf8.count > 255: "is longer than 255 bytes"
        default: nil
        }
        if let reason { throw WebImageError.invalidNamespace("namespace '\(namespace)' \(reason); use a plain directory name") }
    }

    /// Creates a configuration; the defaults are a one-week age limit and 512 MiB trimmed to half,
    /// files 0600 in directories 0700.
    public init(directory: URL, readOnlyDirectories: [URL] = [], maxAge: Duration? = .seconds(7 * 24 * 3600),
                ageBasis: AgeBasis = .lastAccess, maxSize: Int = 512 << 20, trimFraction: Double = 0.5,
                filePermissions: Int = 0o600, directoryPermissions: Int = 0o700) {
        self.directory = directory
        self.readOnlyDirectories = readOnlyDirectories
        self.maxAge = maxAge
        self.ageBasis = ageBasis
        self.maxSize = max(0, maxSize)
        self.trimFraction = min(1, max(0, trimFraction))
        self.filePermissions = filePermissions
        self.directoryPermissions = directoryPermissions
    }

    /// A configuration for a namespace under the platform cache directory (or under `root`).
    /// - Throws: ``WebImageError/invalidNamespace(_:)`` (see ``directory(namespace:root:)``).
    public init(namespace: String, root: URL? = nil) throws {
        self.init(directory: try DiskCacheConfiguration.directory(namespace: namespace, root: root))
    }
}
