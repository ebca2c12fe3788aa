import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage
import WebImageDemo

/// `webimage demo`: the offline tour. It draws a gallery, encodes it with our own encoders,
/// serves it from a loopback HTTP server it starts itself, and loads it through ImageManager:
/// cold (network → decode → caches), warm from disk (a fresh manager), warm from memory, with
/// transforms and thumbnails made from the cached originals, a prefetch, and the failed-URL list.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Offline demo: serve a drawn gallery on loopback, then load it through the manager cold, from disk, from memory and transformed."
    )

    @Option(help: "How many images in the gallery.")
    var count = 24

    @Option(help: "Width of each image in pixels (height is 3/4 of it).")
    var width = 1200

    func validate() throws {
        guard count > 0, width >= 16 else { throw ValidationError("--count must be positive and --width at least 16") }
    }

    func run() async throws {
        let formats: [ImageFormat] = [.jpeg, .png, .webp]
        print("swift-webimage demo: \(count) drawn images of \(width)×\(width * 3 / 4), JPEG/PNG/WebP, served on 127.0.0.1")

        let encodeStart = ContinuousClock.now
        // One encode per core at a time (PNG's deflate of a noisy drawing is the slow part).
        let (width, count) = (width, count)
        let encoded = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            var results: [Int: Data] = [:], next = 0
            func encodeNext() {
                let index = next, format = formats[index % formats.count]
                group.addTask { (index, try SampleImages.encoded(format, width: width, height: width * 3 / 4, seed: index)) }
                next += 1
            }
            while next < min(count, ProcessInfo.processInfo.activeProcessorCount) { encodeNext() }
            for try await (index, data) in group {
                results[index] = data
                if next < count { encodeNext() }
            }
            return results
        }
        let gallery: [(path: String, data: Data, format: ImageFormat)] = (0..<count).map { index in
            let format = formats[index % formats.count]
            return ("/gallery/\(index).\(format.fileExtension ?? "img")", encoded[index] ?? Data(), format)
        }
        let totalBytes = gallery.reduce(0) { $0 + $1.data.count }
        report("encode with our encoders", count: count, since: encodeStart, extra: "\(totalBytes / 1024) KB")

        let server = try await StaticLoopbackServer.start(files: Dictionary(uniqueKeysWithValues: gallery.map { item in
            (item.path, StaticLoopbackServer.File(data: item.data, contentType: item.format.mimeType ?? "application/octet-stream"))
        }))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let downloader = ImageDownloader()
        let urls = gallery.map { server.url($0.path) }
        func makeManager() -> ImageManager {
            ImageManager(cache: ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory))), loader: downloader)
        }

        // Cold: every URL asked for twice at once; the two loads share one download and one decode.
        let manager = makeManager()
        let coldStart = ContinuousClock.now
        let cold = try await loadAll(urls + urls, with: manager)
        await manager.waitForPendingStores()
        report("cold: network + decode + store", count: cold.count, since: coldStart,
               extra: "\(server.totalRequestCount) requests for \(cold.count) loads; \(describe(cold))")

        // Warm from disk: a new manager over the same directory, its memory empty (a new process).
        let fresh = makeManager()
        let diskStart = ContinuousClock.now
        let disk = try await loadAll(urls, with: fresh)
        report("warm disk: read + decode", count: disk.count, since: diskStart, extra: describe(disk))

        let memoryStart = ContinuousClock.now
        let memory = try await loadAll(urls, with: fresh)
        report("warm memory", count: memory.count, since: memoryStart, extra: describe(memory))

        // Transforms of cached images: made from the bytes on disk, never downloaded again.
        let card = ImageLoadContext(transformer: PipelineTransformer([
            ResizeTransformer(width: 240, height: 240, mode: .fill), RoundCornerTransformer(radius: 24),
        ]))
        let requestsBefore = server.totalRequestCount
        let transformStart = ContinuousClock.now
        let transformed = try await loadAll(urls, with: fresh, context: card)
        await fresh.waitForPendingStores()
        report("transform: resize 240 fill + round 24", count: transformed.count, since: transformStart,
               extra: "\(server.totalRequestCount - requestsBefore) requests; \(describe(transformed)); \(sizes(transformed))")

        let thumbnailStart = ContinuousClock.now
        let thumbnails = try await loadAll(urls, with: makeManager(), context: ImageLoadContext(maxPixelSize: 160))
        report("thumbnails: decode from disk to 160 px", count: thumbnails.count, since: thumbnailStart,
               extra: "\(describe(thumbnails)); \(sizes(thumbnails))")

        // A prefetch of a second gallery at low priority, then the failed-URL list at work.
        let extra = (0..<count).map { server.url("/gallery/\($0).\(formats[$0 % formats.count].fileExtension ?? "img")?prefetch") }
        let prefetchStart = ContinuousClock.now
        let summary = await ImagePrefetcher(manager: fresh).prefetch(extra).summary
        report("prefetch (low priority, 3 at a time)", count: summary.progress.finished, since: prefetchStart,
               extra: "\(summary.progress.failed) failed, \(summary.progress.downloadedBytes / 1024) KB")

        let missing = server.url("/gallery/missing.png")
        let first = await failure(of: missing, with: fresh)
        let second = await failure(of: missing, with: fresh)
        print("failed URLs: first load → \(first), second → \(second) (\(server.requestCount(for: "/gallery/missing.png")) request)")
        try await server.shutdown()
        print("done: \(server.totalRequestCount) network requests in all; every later pass used the caches")
    }

    private func loadAll(_ urls: [URL], with manager: ImageManager, context: ImageLoadContext = ImageLoadContext()) async throws -> [ImageResult] {
        try await withThrowingTaskGroup(of: ImageResult.self) { group in
            for url in urls { group.addTask { try await manager.loadImage(with: url, context: context) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func failure(of url: URL, with manager: ImageManager) async -> String {
        do {
            _ = try await manager.loadImage(with: url)
            return "loaded"
        } catch {
            return (error as? WebImageError)?.code ?? "\(error)"
        }
    }

    private func describe(_ results: [ImageResult]) -> String {
        let counts = Dictionary(grouping: results, by: \.cacheType).mapValues(\.count)
        return ["none", "disk", "memory"].compactMap { name in
            counts[ImageCacheType(rawValue: name)!].map { "\($0) from \(name == "none" ? "network" : name)" }
        }.joined(separator: ", ")
    }

    private func sizes(_ results: [ImageResult]) -> String {
        Set(results.map { "\($0.image.width)×\($0.image.height)" }).sorted().joined(separator: ", ")
    }

    private func report(_ step: String, count: Int, since start: ContinuousClock.Instant, extra: String) {
        let milliseconds = (ContinuousClock.now - start).milliseconds
        let rate = milliseconds > 0 ? Double(count) / milliseconds * 1000 : 0
        print(step.padded(to: 40) + " " + String(count).leftPadded(to: 4) + " images " + milliseconds.fixed(1).leftPadded(to: 9)
              + " ms " + rate.fixed(0).leftPadded(to: 9) + " images/s  " + extra)
    }
}
