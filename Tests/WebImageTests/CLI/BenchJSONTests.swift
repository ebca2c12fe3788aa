import Foundation
import Testing
@testable import WebImage

/// The bench commands' records go through the CLI's one JSON writer: a file name that needs
/// escaping still gives one parseable JSON object (they were built by string interpolation, and
/// `bench-decode` wrote the name unescaped).
@Suite("Bench commands' JSON", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"), .serialized)
struct BenchJSONTests {
    static func object(_ run: CLIRun) throws -> [String: Any] {
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
    }

    @Test func aFileNameThatNeedsEscapingStaysOneJSONObject() async throws {
        let directory = try TemporaryDirectory()
        let name = #"a "quoted" \ name.jpg"#
        let file = directory.url.appendingPathComponent(name)
        try sampleJPEG(width: 40, height: 30).write(to: file)

        let decode = try Self.object(try await runCLI(["bench-decode", file.path, "--iterations", "2"]))
        #expect(decode["file"] as? String == name)
        #expect(decode["width"] as? Int == 40 && decode["height"] as? Int == 30)
        #expect((decode["msPerDecode"] as? Double).map { $0 > 0 } == true)

        let list = directory.url.appendingPathComponent("list.txt")
        try Data((file.path + "\n").utf8).write(to: list)
        let files = try Self.object(try await runCLI(["bench-decode-files", list.path, "--parallel", "1"]))
        #expect(files["images"] as? Int == 1 && files["parallel"] as? Int == 1)
        #expect(files["imagesPerSecond"] is Double || files["imagesPerSecond"] is Int)

        let render = try Self.object(try await runCLI(["bench-render", file.path, "--seconds", "0.1", "--parallel", "1",
                                                       "--query", "w=20&h=20&fit=cover&format=png"]))
        #expect((render["images"] as? Int).map { $0 >= 1 } == true)
        #expect((render["outputBytes"] as? Int).map { $0 > 0 } == true)
    }
}
