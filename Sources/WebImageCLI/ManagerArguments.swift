import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The options `load` and `prefetch` share: where the cache is and how requests are made.
struct ManagerArguments: ParsableArguments {
    @OptionGroup var place: CacheLocationArguments

    @Option(help: "How many URLs load at once.")
    var concurrency = 6

    @Option(help: "Idle timeout of a download, in seconds.")
    var timeout = 15.0

    @Option(name: .customLong("header"), help: "An extra request header, 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(help: "The memory cache limit in MiB (default: a fifth of physical memory, at most 1 GiB).")
    var memoryLimit: Int?

    @Option(help: "A file of URLs, one per line (blank lines and lines starting with # are skipped).")
    var urlsFile: String?

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
        if let memoryLimit, memoryLimit < 0 { throw ValidationError("--memory-limit must not be negative") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        _ = try parsedHeaders()
    }

    /// The headers as a dictionary.
    func parsedHeaders() throws -> [String: String] {
        var result: [String: String] = [:]
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("--header needs 'Name: value', got '\(header)'") }
            let name = header[..<colon].trimmingSpacesAndTabs
            guard !name.isEmpty else { throw ValidationError("--header needs a name, got '\(header)'") }
            result[name] = header[header.index(after: colon)...].trimmingSpacesAndTabs
        }
        return result
    }

    /// The URLs from the file (if any) followed by `arguments`, in order, repeats kept.
    func urls(_ arguments: [String]) throws -> [URL] {
        var lines: [String] = []
        if let urlsFile {
            let text = try String(contentsOfFile: urlsFile, encoding: .utf8)
            lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingSpacesAndTabs }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        return try (lines + arguments).map { text in
            guard let url = URL(string: text), url.scheme != nil else { throw ValidationError("not a URL: \(text)") }
            return url
        }
    }

    /// A manager over the chosen disk cache, downloading `concurrency` at a time.
    func makeManager() -> ImageManager {
        let memory = MemoryCache<String, DecodedImage>(costLimit: memoryLimit.map { $0 << 20 } ?? MemoryCache<String, DecodedImage>.defaultCostLimit)
        let cache = ImageCache(memoryCache: memory, diskCache: DiskCache(configuration: place.configuration()))
        let downloader = ImageDownloader(configuration: ImageDownloaderConfiguration(
            maxConcurrentDownloads: concurrency, timeout: .milliseconds(Int(timeout * 1000))))
        return ImageManager(cache: cache, loader: downloader)
    }
}
