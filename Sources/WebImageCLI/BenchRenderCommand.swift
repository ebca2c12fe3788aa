import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageServer

/// `webimage bench-render FILE`: the service's decode + resize + encode of one file, repeated on
/// N workers for a while, in one process without HTTP: the ceiling compare-serve.sh measures
/// `webimage serve` against.
struct BenchRenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-render",
        abstract: "Throughput of the service's render of one file, without HTTP (used by Benchmarks/scripts).",
        shouldDisplay: false
    )

    @Argument(help: "The source image file.")
    var file: String

    @Option(help: "The /image parameters other than url.")
    var query = "w=300&h=300&fit=cover&format=jpeg&q=80"

    @Option(help: "How long to render, in seconds.")
    var seconds: Double = 10

    @Option(help: "How many renders run at once (default: the active cores, as the service's render pool).")
    var parallel = ProcessInfo.processInfo.activeProcessorCount

    func run() async throws {
        let source = try Data(contentsOf: URL(fileURLWithPath: file))
        let benchmark = try RenderBenchmark(query: query)
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(max(seconds, 0.1) * 1000))
        let (renders, bytes) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<max(1, parallel) {
                group.addTask {
                    var count = 0, bytes = 0
                    while ContinuousClock.now < deadline {
                        bytes += try benchmark.render(source)
                        count += 1
                    }
                    return (count, bytes)
                }
            }
            return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
        let elapsed = (ContinuousClock.now - start).milliseconds / 1000
        print(JSONOutput.line(Record(images: renders, parallel: parallel, seconds: elapsed.rounded(places: 6),
                                     imagesPerSecond: (Double(renders) / elapsed).rounded(places: 2), outputBytes: bytes)))
    }

    /// What one run prints (one JSON line).
    struct Record: Encodable {
        var images: Int
        var parallel: Int
        var seconds: Double
        var imagesPerSecond: Double
        var outputBytes: Int
    }
}
