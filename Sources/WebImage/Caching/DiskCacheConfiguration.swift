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

    /// The directory of a namespace: `<platform cache>/swift-webimage/<namespace>`.
    public static func directory(namespace: String, root: URL? = nil) -> URL {
        let safe = namespace.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" }
        return (root ?? platformCacheDirectory.appendingPathComponent("swift-webimage", isDirectory: true))
            .appendingPathComponent(String(safe), isDirectory: true)
    }

    /// Creates a configuration; the defaults are a one-week age limit and 512 MiB trimmed to half.
    public init(directory: URL, readOnlyDirectories: [URL] = [], maxAge: Duration? = .seconds(7 * 24 * 3600),
                ageBasis: AgeBasis = .lastAccess, maxSize: Int = 512 << 20, trimFraction: Double = 0.5) {
        self.directory = directory
        self.readOnlyDirectories = readOnlyDirectories
        self.maxAge = maxAge
        self.ageBasis = ageBasis
        self.maxSize = max(0, maxSize)
        self.trimFraction = min(1, max(0, trimFraction))
    }

    /// A configuration for a namespace under the platform cache directory (or under `root`).
    public init(namespace: String, root: URL? = nil) {
        self.init(directory: DiskCacheConfiguration.directory(namespace: namespace, root: root))
    }
}
