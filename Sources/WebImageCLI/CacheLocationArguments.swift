import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Where a disk cache lives: the options every command that opens one shares.
struct CacheLocationArguments: ParsableArguments {
    @Option(help: "The cache root directory (default: $XDG_CACHE_HOME or ~/.cache, then swift-webimage).")
    var cacheDir: String?

    @Option(help: "The namespace (one directory per namespace).")
    var namespace = "default"

    /// Refuses a namespace that is not one plain directory name (`..` would reach the parent of
    /// the cache root), before any command touches the disk.
    func validate() throws {
        do {
            try DiskCacheConfiguration.validate(namespace: namespace)
        } catch let error as WebImageError {
            throw ValidationError("--namespace: \(error)")
        }
    }

    /// The disk cache configuration for this place, with the default limits.
    func configuration() -> DiskCacheConfiguration {
        let root = cacheDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
        guard let configuration = try? DiskCacheConfiguration(namespace: namespace, root: root) else {
            // Unreachable: validate() refused the namespace before any command ran. A harmless
            // place all the same, never the root itself.
            return DiskCacheConfiguration(directory: (root ?? DiskCacheConfiguration.platformCacheDirectory)
                .appendingPathComponent("invalid-namespace", isDirectory: true))
        }
        return configuration
    }
}
