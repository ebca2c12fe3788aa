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

    /// The disk cache configuration for this place, with the default limits.
    func configuration() -> DiskCacheConfiguration {
        DiskCacheConfiguration(namespace: namespace, root: cacheDir.map { URL(fileURLWithPath: $0, isDirectory: true) })
    }
}
