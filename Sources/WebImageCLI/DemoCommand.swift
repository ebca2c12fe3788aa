import ArgumentParser
import Foundation
import WebImage
import WebImageTestSupport

/// `webimage demo`: the offline tour. It draws a gallery, encodes it with our own encoders,
/// serves it from a loopback HTTP server it starts itself, then loads it cold (network → decode →
/// disk cache), warm from disk (fresh memory) and warm from memory, and makes thumbnails.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Offline demo: serve a drawn gallery on loopback, then load it cold, from disk and from memory."
    )

    @Option(help: "How many images in the gallery.")
    var count = 24

    @Option(help: "Width of each image in pixels (height is 3/4 of it).")
    var width = 1200

    func run() async throws {
        let coders = ImageCodersManager.shared
        let formats: [ImageFormat] = [.jpeg, .png, .webp]
        print("swift-webimage demo: \(count) drawn images of \(width)×\(width * 3 / 4), JPEG/PNG/WebP, served on 127.0.0.1")

        var gallery: [(path: String, data: Data, format: ImageFormat)] = []
        let encodeStart = ContinuousClock.now
        for index in 0..<count {
            let format = formats[index % formats.count]
            let data = try SampleImages.encoded(format, width: width, height: width * 3 / 4, seed: index)
            gallery.append(("/gallery/\(index).\(format.fileExtension ?? "img")", data, format))
        }
        let totalBytes = gallery.reduce(0) { $0 + $1.data.count }
        report("encode", count: count, since: encodeStart, extra: "\(totalBytes / 1024) KB with our encoders")

        let server = try await LoopbackServer.start()
        for item in gallery { server.route(item.path, .image(item.data, contentType: item.format.mimeType ?? "application/octet-stream")) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let downloader = ImageDownloader()
        let urls = gallery.map { server.url($0.path) }

        // Cold: download (coalesced, 6 at a time), decode, store to memory and disk.
        let cold = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory)))
        let coldStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for url in urls {
                group.addTask {
                    var bytes = Data()
                    var response: ImageLoadResponse?
                    for try await event in downloader.load(ImageLoadRequest(url: url)) {
                        if case .completed(let data, let final) = event { bytes = data; response = final }
                    }
                    let image = try coders.decode(bytes, options: DecodeOptions())
                    await cold.store(image, data: bytes, metadata: ImageCacheMetadata(
                        originalURL: url.absoluteString, contentType: response?.mimeType, etag: response?.validators.etag), key: url.absoluteString)
                }
            }
            try await group.waitForAll()
        }
        report("cold (network + decode + store)", count: count, since: coldStart,
               extra: "\(server.totalRequestCount) requests to the server")

        // Warm from disk: a new cache over the same directory, memory empty.
        let warm = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory)))
        let diskStart = ContinuousClock.now
        var fromDisk = 0
        for url in urls where await warm.query(key: url.absoluteString).cacheType == .disk { fromDisk += 1 }
        report("warm disk (read + decode)", count: fromDisk, since: diskStart,
               extra: "\(await warm.diskCache.count) entries, \(await warm.diskCache.totalSize / 1024) KB on disk")

        let memoryStart = ContinuousClock.now
        var fromMemory = 0
        for url in urls where await warm.query(key: url.absoluteString).cacheType == .memory { fromMemory += 1 }
        report("warm memory", count: fromMemory, since: memoryStart,
               extra: "\(warm.memoryCache.totalCost / 1024 / 1024) MB decoded in memory")

        let thumbnailStart = ContinuousClock.now
        var sizes: Set<String> = []
        for item in gallery {
            let thumbnail = try coders.decode(item.data, options: DecodeOptions(maxPixelSize: 160))
            sizes.insert("\(thumbnail.width)×\(thumbnail.height)")
        }
        report("thumbnails (decode straight to 160 px)", count: count, since: thumbnailStart, extra: sizes.sorted().joined(separator: ", "))
        try await server.shutdown()
        print("done: \(server.totalRequestCount) network requests for \(count) images; the later passes used the caches only")
    }

    private func report(_ step: String, count: Int, since start: ContinuousClock.Instant, extra: String) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let rate = milliseconds > 0 ? Double(count) / milliseconds * 1000 : 0
        let label = step.padding(toLength: 40, withPad: " ", startingAt: 0)
        print(label + String(format: " %4d images %9.1f ms %9.0f images/s  ", count, milliseconds, rate) + extra)
    }
}
