import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `webimage bench-decode FILE`: decodes one file repeatedly in-process and reports throughput
/// and the peak memory growth of one decode, for the side-by-side benchmark scripts.
struct BenchDecodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-decode",
        abstract: "Time repeated decodes of one file (used by Benchmarks/scripts).",
        shouldDisplay: false
    )

    @Argument(help: "The image file.")
    var file: String

    @Option(help: "How many decodes to time.")
    var iterations = 20

    @Option(help: "Decode to a thumbnail whose longer side is at most N pixels.")
    var maxPixelSize: Int?

    @Flag(help: "Keep each decode on one thread (DecodeOptions.parallelDecoding = false).")
    var oneThread = false

    @Option(help: "JPEG 1/8-scale decodes through 'dc' (our DC decoder) or 'libjpeg-turbo' (tjDecompress2); default: the coder's choice.")
    var jpegEighthScale: String?

    @Flag(help: "Skip the full-size decode that reports source megapixels (for instruction counts).")
    var noSourceSize = false

    func run() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let options = DecodeOptions(maxPixelSize: maxPixelSize, parallelDecoding: !oneThread)
        let decode = try decoder()
        // Peak resident growth of the first decode: reset the kernel's high-water mark first.
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let baseline = Self.status("VmRSS")
        var image = try decode(data, options)
        let peakGrowth = Self.status("VmHWM").map { $0 - (baseline ?? 0) }
        let start = ContinuousClock.now
        for _ in 0..<iterations {
            image = try decode(data, options)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let perDecode = seconds / Double(max(iterations, 1))
        // Throughput counts source megapixels, as tjbench does.
        // A full-size decode already knows the source size; only thumbnails need it looked up.
        let sourcePixels = Double(maxPixelSize == nil || noSourceSize ? image.width * image.height
                                  : Self.sourcePixels(data) ?? image.width * image.height)
        print(JSONOutput.line(Record(file: URL(fileURLWithPath: file).lastPathComponent, width: image.width, height: image.height,
                                     msPerDecode: (perDecode * 1000).rounded(places: 3),
                                     megapixelsPerSecond: (sourcePixels / perDecode / 1e6).rounded(places: 2),
                                     peakGrowthKB: peakGrowth ?? -1)))
    }

    /// The shared coders, or a JPEG coder pinned to one 1/8-scale path (for
    /// Benchmarks/scripts/compare-eighth-scale.sh).
    private func decoder() throws -> (Data, DecodeOptions) throws -> DecodedImage {
        switch jpegEighthScale {
        case nil: return ImageCodersManager.shared.decode
        case "dc": return JPEGCoder().decode
        case "libjpeg-turbo":
            var coder = JPEGCoder()
            coder.decodesEighthScaleFromDC = false
            return coder.decode
        case let other?: throw ValidationError("--jpeg-eighth-scale: 'dc' or 'libjpeg-turbo', not '\(other)'")
        }
    }

    /// What one run prints (one JSON line).
    struct Record: Encodable {
        var file: String
        var width: Int
        var height: Int
        var msPerDecode: Double
        var megapixelsPerSecond: Double
        var peakGrowthKB: Int
    }

    /// A `/proc/self/status` field in kB.
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// The full-size pixel count of the source image (decoded once at full size).
    static func sourcePixels(_ data: Data) -> Int? {
        (try? ImageCodersManager.shared.decode(data, options: DecodeOptions())).map { $0.width * $0.height }
    }
}
