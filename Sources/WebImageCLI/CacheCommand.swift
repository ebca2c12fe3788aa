import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `webimage cache stats|clean|clear`: look after a disk cache.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and clean a swift-webimage disk cache.",
        subcommands: [Stats.self, Clean.self, Clear.self, WriteLoop.self]
    )

    /// Where the cache is and its limits.
    struct Location: ParsableArguments {
        @OptionGroup var place: CacheLocationArguments

        @Option(help: "Entries older than this many seconds (since last access) are expired.")
        var maxAge: Int?

        @Option(help: "The most bytes kept; 0 means unlimited.")
        var maxSize: Int?

        @Flag(help: "Print JSON.")
        var json = false

        func diskCache() -> DiskCache {
            var configuration = place.configuration()
            if let maxAge { configuration.maxAge = .seconds(maxAge) }
            if let maxSize { configuration.maxSize = maxSize }
            return DiskCache(configuration: configuration)
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stats", abstract: "Print the number of entries, their total size and the directory.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = location.diskCache()
            let count = await cache.count, size = await cache.totalSize
            let directory = cache.configuration.directory.path
            if location.json {
                print(JSONOutput.line(CacheReport(count: count, totalSize: size, directory: directory)))
            } else {
                print("\(directory): \(count) entries, \(size) bytes")
            }
        }
    }

    struct Clean: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clean", abstract: "Remove expired entries, then trim to the size limit.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = location.diskCache()
            let removed = await cache.removeExpired()
            let count = await cache.count, size = await cache.totalSize
            print(location.json ? JSONOutput.line(CacheReport(count: count, totalSize: size, removed: removed))
                                : "removed \(removed) entries; \(count) entries, \(size) bytes remain")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove every entry.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = location.diskCache()
            await cache.removeAll()
            print(location.json ? JSONOutput.line(CacheReport(count: 0, totalSize: 0)) : "cleared \(cache.configuration.directory.path)")
        }
    }

    /// Writes entries forever (or `--count` of them), printing each key once stored: the child
    /// process the crash-safety test kills with SIGKILL mid-write, and the second process of the
    /// shared-size-limit test. Entry `k` holds bytes derived from its key, so a reader can tell a
    /// whole entry from a torn one.
    struct WriteLoop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "_write-loop", shouldDisplay: false)
        @OptionGroup var location: Location

        @Option(help: "Keys are this prefix and a number.")
        var keyPrefix = "entry-"

        @Option(help: "How many distinct keys are written in turn.")
        var keys = 8

        @Option(help: "Stop after this many writes.")
        var count: Int?

        @Flag(help: "Open the cache, print 'ready', then wait for a line on standard input before writing.")
        var waitForStart = false

        func run() async throws {
            let cache = location.diskCache()
            if waitForStart {
                _ = await cache.count
                print("ready")
                fflush(nil)
                _ = readLine()
            }
            var index = 0
            while count.map({ index < $0 }) ?? true {
                let key = "\(keyPrefix)\(index % max(1, keys))"
                let data = Self.payload(forKey: key, length: 200_000 + (index % 5) * 100_000)
                try cache.storeSynchronously(data, metadata: ImageCacheMetadata(originalURL: key), forKey: key)
                print(key)
                index += 1
            }
        }

        static func payload(forKey key: String, length: Int) -> Data {
            let seed = Array(key.utf8)
            return Data((0..<length).map { seed[$0 % seed.count] &+ UInt8(truncatingIfNeeded: $0 / seed.count) })
        }
    }
}

/// What `cache stats|clean|clear --json` print: one object (`directory` from stats, `removed` from clean).
struct CacheReport: Encodable {
    var count: Int
    var totalSize: Int
    var directory: String?
    var removed: Int?
}
