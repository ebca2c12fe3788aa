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

    @Flag(help: "Print one JSON object per load, one per line (the pass summaries go to stderr).")
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

    @Flag(help: "Print only each pass's summary, on stdout (as JSON with --json).")
    var summaryOnly = false

    @Flag(help: "Load progressively: print a line for each partial image before the load's own line (as JSON with --json).")
    var progressive = false

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
        // `bytes` in the JSON record is the original data's size, which a memory hit knows only
        // when the cached bytes are read with it.
        if json && !summaryOnly { options.insert(.queryMemoryDataToo) }
        if retryFailed { options.insert(.retryFailed) }
        if refresh { options.insert(.refreshCached) }
        if memoryOnly { options.insert(.cacheMemoryOnly) }
        if fromCacheOnly { options.insert(.fromCacheOnly) }
        if progressive { options.insert(.progressiveLoad) }
        var context = ImageLoadContext(maxPixelSize: maxPixelSize, headers: try common.parsedHeaders())
        context.transformer = try parsedResize()
        if noCache { context.cacheKeyFilter = { _ in nil } }
        if let output { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) }

        var failed = false
        for pass in 1...passes {
            let start = ContinuousClock.now
            let passRecords = await loadAll(list, pass: pass, manager: manager, options: options, context: context)
            // A pass ends when its images are stored, so the next process finds them on disk.
            await manager.waitForPendingStores()
            let summary = PassSummary(pass: pass, records: passRecords, elapsed: ContinuousClock.now - start)
            if !summaryOnly {
                for record in passRecords { print(json ? JSONOutput.line(record) : record.line) }
            }
            // The summary is for people unless asked for alone: stdout stays one record per load.
            if summaryOnly {
                print(json ? JSONOutput.line(summary) : summary.line)
            } else {
                writeToStandardError(summary.line + "\n")
            }
            failed = failed || summary.failed > 0
        }
        if failed { throw ExitCode(1) }
    }

    /// Loads `list` at most `concurrency` at a time, in order; returns one record per URL, in list order.
    private func loadAll(_ list: [URL], pass: Int, manager: ImageManager, options: ImageLoadOptions,
                         context: ImageLoadContext) async -> [LoadRecord] {
        let outputDirectory = output
        let isOriginal = resize == nil && maxPixelSize == nil
        let hashesPixels = json && !summaryOnly
        // Partial images print as they arrive, so they come before the pass's records.
        let reportsPartials = progressive && !summaryOnly
        return await withTaskGroup(of: (Int, LoadRecord).self) { group in
            var next = 0
            func addNext() {
                guard next < list.count else { return }
                let index = next, url = list[index]
                next += 1
                group.addTask {
                    let start = ContinuousClock.now
                    do {
                        let result = try await reportsPartials
                            ? manager.loadReportingPartials(url, options: options, context: context, start: start) { partial in
                                print(json ? JSONOutput.line(partial) : partial.line)
                            }
                            : manager.loadImage(with: url, options: options, context: context)
                        let elapsed = ContinuousClock.now - start
                        if let outputDirectory { try Self.write(result, index: index, original: isOriginal, to: outputDirectory) }
                        return (index, LoadRecord(url: url, pass: pass, result: result, hashingPixels: hashesPixels, elapsed: elapsed))
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
///
/// Its JSON form is the `load --json` contract, one object per line: `url`, `status` (`"ok"` or
/// `"error"`), `cacheType`, `format`, `width`, `height`, `frames`, `bytes`, `rgbaSHA256`, `ms`, and
/// on failure `error` (`code`, `message`, `transient`); `pass` and `finalURL` besides. Fields a
/// failed load cannot know are `null`.
struct LoadRecord: Encodable {
    struct Loaded {
        var cacheType: ImageCacheType
        var format: ImageFormat
        var width: Int
        var height: Int
        var frames: Int
        var bytes: Int?
        var rgbaSHA256: String?
        var finalURL: URL
        var cacheKey: String?
    }

    struct Failure: Encodable {
        var code: String
        var message: String
        var transient: Bool
    }

    var url: URL
    var pass: Int
    var result: Loaded?
    var error: WebImageError?
    var elapsed: Duration

    /// - Parameter hashingPixels: whether to compute `rgbaSHA256` (the hash of the canonical RGBA
    ///   of the first frame, as `decode --json` does); it costs a pass over every pixel.
    init(url: URL, pass: Int, result: ImageResult? = nil, hashingPixels: Bool = false, error: (any Error)? = nil,
         elapsed: Duration) {
        self.url = url
        self.pass = pass
        self.result = result.map {
            let format = $0.data.map(ImageFormat.detect) ?? .unknown
            return Loaded(cacheType: $0.cacheType, format: format == .unknown ? $0.image.format : format,
                          width: $0.image.width, height: $0.image.height, frames: $0.image.frameCount,
                          bytes: $0.data?.count, rgbaSHA256: hashingPixels ? SHA256.hex(of: $0.image.bitmap.canonicalRGBA()) : nil,
                          finalURL: $0.url, cacheKey: $0.cacheKey)
        }
        self.error = error.map { $0 as? WebImageError ?? .connectionFailed(String(describing: $0)) }
        self.elapsed = elapsed
    }

    var milliseconds: Double { elapsed.milliseconds }

    var line: String {
        if let result {
            let frames = result.frames == 1 ? "1 frame" : "\(result.frames) frames"
            let kilobytes = result.bytes.map { (Double($0) / 1024).fixed(1) } ?? "?"
            return "ok    " + result.cacheType.rawValue.padded(to: 7) + "\(result.width)×\(result.height)".padded(to: 12)
                + frames.padded(to: 10) + kilobytes.leftPadded(to: 8) + " KB " + milliseconds.fixed(1).leftPadded(to: 8) + " ms  " + url.absoluteString
        }
        return "FAIL  \(error?.code ?? "unknown") (\(error?.description ?? ""))" + " " + milliseconds.fixed(1).leftPadded(to: 8) + " ms  " + url.absoluteString
    }

    private enum CodingKeys: String, CodingKey {
        case url, pass, status, cacheType, format, width, height, frames, bytes, rgbaSHA256, ms, error, finalURL, cacheKey
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encode(pass, forKey: .pass)
        try container.encode(result == nil ? "error" : "ok", forKey: .status)
        try container.encode(result?.cacheType.rawValue ?? ImageCacheType.none.rawValue, forKey: .cacheType)
        // Every record has the same keys; what a failed load cannot know is null, not missing.
        try container.encode(result.map { $0.format.rawValue }, forKey: .format)
        try container.encode(result?.width, forKey: .width)
        try container.encode(result?.height, forKey: .height)
        try container.encode(result?.frames, forKey: .frames)
        try container.encode(result?.bytes, forKey: .bytes)
        try container.encode(result?.rgbaSHA256, forKey: .rgbaSHA256)
        try container.encode((milliseconds * 1000).rounded() / 1000, forKey: .ms)
        try container.encodeIfPresent(result?.finalURL.absoluteString, forKey: .finalURL)
        try container.encodeIfPresent(result?.cacheKey, forKey: .cacheKey)
        if let error {
            try container.encode(Failure(code: error.code, message: error.description, transient: error.isTransient), forKey: .error)
        }
    }
}

/// One pass over the list; its JSON form is what `load --json --summary-only` prints, one line per pass.
struct PassSummary: Encodable {
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

    private struct CacheTypeCounts: Encodable {
        var none: Int
        var disk: Int
        var memory: Int
    }

    private enum CodingKeys: String, CodingKey {
        case pass, loaded, failed, seconds, imagesPerSecond, cacheTypes
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pass, forKey: .pass)
        try container.encode(loaded, forKey: .loaded)
        try container.encode(failed, forKey: .failed)
        try container.encode((seconds * 1e6).rounded() / 1e6, forKey: .seconds)
        try container.encode((imagesPerSecond * 100).rounded() / 100, forKey: .imagesPerSecond)
        try container.encode(CacheTypeCounts(none: count(.none), disk: count(.disk), memory: count(.memory)), forKey: .cacheTypes)
    }
}

extension Duration {
    /// This duration in milliseconds.
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
