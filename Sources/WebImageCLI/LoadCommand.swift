import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `webimage load URL...`: loads every URL through one manager and reports what happened to each.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load images through the manager (cache → download → decode → transform → store).",
        discussion: "URLs repeated on the command line are separate loads, so coalescing and the failed-URL list show."
    )

    @Argument(help: "The URLs to load.")
    var urls: [String] = []

    @OptionGroup var common: ManagerArguments

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "Load URLs that failed before (the failed list lives as long as the process).")
    var retryFailed = false

    @Flag(help: "Revalidate cached images with the server (ETag / Last-Modified).")
    var refresh = false

    @Flag(help: "Cache in memory only, never on disk.")
    var memoryOnly = false

    @Flag(help: "Never download: a cache miss fails.")
    var fromCacheOnly = false

    @Flag(help: "Neither query nor store any cache.")
    var noCache = false

    @Option(help: "Decode to a thumbnail whose longer side is at most N pixels.")
    var maxPixelSize: Int?

    @Option(help: "Resize to WxH, optionally :fit (default) or :fill.")
    var resize: String?

    @Option(help: "Write each image into this directory (original bytes, or PNG when transformed).")
    var output: String?

    @Option(help: "Load the whole list this many times in this process (later passes hit memory).")
    var passes = 1

    @Flag(help: "Print only each pass's summary.")
    var summaryOnly = false

    func validate() throws {
        guard passes >= 1 else { throw ValidationError("--passes must be at least 1") }
        if let maxPixelSize, maxPixelSize < 1 { throw ValidationError("--max-pixel-size must be positive") }
        _ = try parsedResize()
    }

    func run() async throws {
        let list = try common.urls(urls)
        guard !list.isEmpty else { throw ValidationError("give URLs as arguments or with --urls-file") }
        let manager = common.makeManager()
        var options: ImageLoadOptions = []
        if retryFailed { options.insert(.retryFailed) }
        if refresh { options.insert(.refreshCached) }
        if memoryOnly { options.insert(.cacheMemoryOnly) }
        if fromCacheOnly { options.insert(.fromCacheOnly) }
        var context = ImageLoadContext(maxPixelSize: maxPixelSize, headers: try common.parsedHeaders())
        context.transformer = try parsedResize()
        if noCache { context.cacheKeyFilter = { _ in nil } }
        if let output { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) }

        var records: [LoadRecord] = []
        var summaries: [PassSummary] = []
        for pass in 1...passes {
            let start = ContinuousClock.now
            let passRecords = await loadAll(list, pass: pass, manager: manager, options: options, context: context)
            // A pass ends when its images are stored, so the next process finds them on disk.
            await manager.waitForPendingStores()
            let summary = PassSummary(pass: pass, records: passRecords, elapsed: ContinuousClock.now - start)
            summaries.append(summary)
            if !json {
                if !summaryOnly { for record in passRecords { print(record.line) } }
                print(summary.line)
            }
            records += passRecords
        }
        if json {
            var object: [String: Any] = ["passes": summaries.map(\.json)]
            if !summaryOnly { object["results"] = records.map(\.json) }
            print(JSONText.render(object))
        }
        if records.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }

    /// Loads `list` at most `concurrency` at a time, in order; returns one record per URL, in list order.
    private func loadAll(_ list: [URL], pass: Int, manager: ImageManager, options: ImageLoadOptions,
                         context: ImageLoadContext) async -> [LoadRecord] {
        let outputDirectory = output
        let isOriginal = resize == nil && maxPixelSize == nil
        return await withTaskGroup(of: (Int, LoadRecord).self) { group in
            var next = 0
            func addNext() {
                guard next < list.count else { return }
                let index = next, url = list[index]
                next += 1
                group.addTask {
                    let start = ContinuousClock.now
                    do {
                        let result = try await manager.loadImage(with: url, options: options, context: context)
                        let elapsed = ContinuousClock.now - start
                        if let outputDirectory { try Self.write(result, index: index, original: isOriginal, to: outputDirectory) }
                        return (index, LoadRecord(url: url, pass: pass, result: result, elapsed: elapsed))
                    } catch {
                        return (index, LoadRecord(url: url, pass: pass, error: error, elapsed: ContinuousClock.now - start))
                    }
                }
            }
            for _ in 0..<common.concurrency { addNext() }
            var records = [LoadRecord?](repeating: nil, count: list.count)
            for await (index, record) in group {
                records[index] = record
                addNext()
            }
            return records.compactMap { $0 }
        }
    }

    private func parsedResize() throws -> ResizeTransformer? {
        guard let resize else { return nil }
        let parts = resize.split(separator: ":")
        let size = parts[0].lowercased().split(separator: "x")
        guard parts.count <= 2, size.count == 2, let width = Int(size[0]), let height = Int(size[1]), width > 0, height > 0 else {
            throw ValidationError("--resize needs WxH[:fit|fill], got '\(resize)'")
        }
        let mode: ResizeTransformer.Mode
        switch parts.count == 2 ? String(parts[1]) : "fit" {
        case "fit": mode = .fit
        case "fill": mode = .fill
        default: throw ValidationError("--resize mode is fit or fill, got '\(parts[1])'")
        }
        return ResizeTransformer(width: width, height: height, mode: mode)
    }

    /// Writes the original bytes when the image is the original, else a PNG of the image.
    private static func write(_ result: ImageResult, index: Int, original isOriginal: Bool, to directory: String) throws {
        let base = result.url.deletingPathExtension().lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        let name = "\(index)-\(base.isEmpty ? "image" : base)"
        if isOriginal, let data = result.data, ImageFormat.detect(data) != .unknown {
            let format = ImageFormat.detect(data)
            try data.write(to: URL(fileURLWithPath: directory).appendingPathComponent("\(name).\(format.fileExtension ?? "img")"))
        } else {
            let png = try ImageCodersManager.shared.encode(result.image, format: .png, options: EncodeOptions())
            try png.write(to: URL(fileURLWithPath: directory).appendingPathComponent("\(name).png"))
        }
    }
}

/// What happened to one load (the facts only: holding the image would keep every bitmap alive).
struct LoadRecord {
    struct Loaded {
        var cacheType: ImageCacheType
        var width: Int
        var height: Int
        var frames: Int
        var bytes: Int
        var finalURL: URL
        var cacheKey: String?
    }

    var url: URL
    var pass: Int
    var result: Loaded?
    var error: WebImageError?
    var elapsed: Duration

    init(url: URL, pass: Int, result: ImageResult? = nil, error: (any Error)? = nil, elapsed: Duration) {
        self.url = url
        self.pass = pass
        self.result = result.map {
            Loaded(cacheType: $0.cacheType, width: $0.image.width, height: $0.image.height, frames: $0.image.frames.count,
                   bytes: $0.data?.count ?? 0, finalURL: $0.url, cacheKey: $0.cacheKey)
        }
        self.error = error.map { $0 as? WebImageError ?? .connectionFailed(String(describing: $0)) }
        self.elapsed = elapsed
    }

    var milliseconds: Double { elapsed.milliseconds }

    var line: String {
        if let result {
            let frames = result.frames == 1 ? "1 frame" : "\(result.frames) frames"
            let kilobytes = (Double(result.bytes) / 1024).fixed(1).leftPadded(to: 8)
            return "ok    " + result.cacheType.rawValue.padded(to: 7) + "\(result.width)×\(result.height)".padded(to: 12)
                + frames.padded(to: 10) + kilobytes + " KB " + milliseconds.fixed(1).leftPadded(to: 8) + " ms  " + url.absoluteString
        }
        return "FAIL  \(error?.code ?? "unknown") (\(error?.description ?? ""))" + " " + milliseconds.fixed(1).leftPadded(to: 8) + " ms  " + url.absoluteString
    }

    var json: [String: Any] {
        var object: [String: Any] = ["url": url.absoluteString, "pass": pass, "ok": result != nil,
                                     "ms": (milliseconds * 1000).rounded() / 1000]
        if let result {
            object["cacheType"] = result.cacheType.rawValue
            object["width"] = result.width
            object["height"] = result.height
            object["frames"] = result.frames
            object["bytes"] = result.bytes
            object["finalURL"] = result.finalURL.absoluteString
            if let key = result.cacheKey { object["cacheKey"] = key }
        }
        if let error {
            object["error"] = error.code
            object["message"] = error.description
        }
        return object
    }
}

/// One pass over the list.
struct PassSummary {
    var pass: Int
    var records: [LoadRecord]
    var elapsed: Duration

    var loaded: Int { records.filter { $0.result != nil }.count }
    var failed: Int { records.count - loaded }
    var seconds: Double { elapsed.milliseconds / 1000 }
    var imagesPerSecond: Double { seconds > 0 ? Double(loaded) / seconds : 0 }
    func count(_ type: ImageCacheType) -> Int { records.filter { $0.result?.cacheType == type }.count }

    var line: String {
        "pass \(pass): \(loaded) loaded (network \(count(.none)), disk \(count(.disk)), memory \(count(.memory))), "
            + "\(failed) failed in \(seconds.fixed(3)) s: \(imagesPerSecond.fixed(1)) images/s"
    }

    var json: [String: Any] {
        ["pass": pass, "loaded": loaded, "failed": failed, "seconds": (seconds * 1e6).rounded() / 1e6,
         "imagesPerSecond": (imagesPerSecond * 100).rounded() / 100,
         "cacheTypes": ["none": count(.none), "disk": count(.disk), "memory": count(.memory)]]
    }
}

extension Duration {
    /// This duration in milliseconds.
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
