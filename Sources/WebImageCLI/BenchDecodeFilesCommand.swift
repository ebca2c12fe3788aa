import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `webimage bench-decode-files LIST`: decodes every file of a list once, on N workers, from
/// memory: the decode-only ceiling the pipeline benchmark compares the manager's throughput with.
struct BenchDecodeFilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-decode-files",
        abstract: "Decode-only throughput of a list of files (used by Benchmarks/scripts).",
        shouldDisplay: false
    )

    @Argument(help: "A file listing image paths, one per line.")
    var list: String

    @Option(help: "How many decodes run at once (default: the active cores).")
    var parallel = ProcessInfo.processInfo.activeProcessorCount

    @Flag(help: "Keep every decoded image until the end, as a memory cache does (no buffer reuse).")
    var keep = false

    func run() async throws {
        let paths = try String(contentsOfFile: list, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
        // Read first: this measures decoding, not the disk.
        let files = try paths.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let counter = WorkIndex()
        let kept = KeptImages()
        let keep = self.keep
        let coders = ImageCodersManager.shared
        let start = ContinuousClock.now
        let decoded = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<max(1, parallel) {
                group.addTask {
                    var count = 0
                    while true {
                        let index = counter.take()
                        guard index < files.count else { return count }
                        let image = try coders.decode(files[index], options: DecodeOptions())
                        if keep { kept.append(image) }
                        count += 1
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        let seconds = (ContinuousClock.now - start).milliseconds / 1000
        print(JSONOutput.line(Record(images: decoded, kept: kept.count, parallel: parallel, seconds: seconds.rounded(places: 6),
                                     imagesPerSecond: (Double(decoded) / seconds).rounded(places: 2))))
    }

    /// What one run prints (one JSON line).
    struct Record: Encodable {
        var images: Int
        var kept: Int
        var parallel: Int
        var seconds: Double
        var imagesPerSecond: Double
    }
}

/// The decoded images a `--keep` run holds; the lock guards only the array.
private final class KeptImages: Sendable {
    private let images = Locked<[DecodedImage]>([])
    func append(_ image: DecodedImage) { images.withLock { $0.append(image) } }
    var count: Int { images.withLock { $0.count } }
}
