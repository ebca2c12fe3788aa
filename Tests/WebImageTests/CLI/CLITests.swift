import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// What one run of the `webimage` binary printed.
struct CLIRun: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    /// stdout parsed as a JSON object.
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    }
}

/// Runs the built `webimage` binary off the cooperative pool (``ChildProcess/run(_:_:environment:directory:)``,
/// so a slow run never starves the tests' own tasks). `environment` replaces the inherited environment.
func runCLI(_ arguments: [String], environment: [String: String]? = nil) async throws -> CLIRun {
    let binary = try #require(CrashSafetyTests.binary)
    let run = try await ChildProcess.run(binary.path, arguments, environment: environment)
    return CLIRun(status: run.status, stdout: String(decoding: run.stdout, as: UTF8.self), stderr: run.stderr)
}

@Suite("webimage load and prefetch", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct CLITests {
    @Test func loadColdThenWarmFromDiskInANewProcess() async throws {
        try await withServer { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 90, height: 60)),
                                                    delayBeforeHead: .milliseconds(100)))
            let directory = try TemporaryDirectory()
            let url = server.url("/a.jpg").absoluteString
            let cold = try await runCLI(["load", url, url, "--cache-dir", directory.url.path, "--json", "--header", "X-Run: cold"])
            #expect(cold.status == 0, "\(cold.stderr)")
            let results = try LoadJSONContractTests.records(cold)
            #expect(results.count == 2, "a URL given twice is loaded twice")
            #expect(results.allSatisfy { $0["status"] as? String == "ok" && $0["width"] as? Int == 90 })
            #expect(server.requestCount(for: "/a.jpg") == 1, "the two loads shared one download")
            #expect(server.requests.first?.headers["x-run"] == "cold")

            let warm = try await runCLI(["load", url, "--cache-dir", directory.url.path, "--json"])
            let warmResults = try LoadJSONContractTests.records(warm)
            #expect(warmResults.first?["cacheType"] as? String == "disk")
            #expect(server.requestCount(for: "/a.jpg") == 1)

            let text = try await runCLI(["load", url, "--cache-dir", directory.url.path, "--passes", "2"])
            #expect(text.stderr.contains("pass 1: 1 loaded (network 0, disk 1, memory 0)"))
            #expect(text.stderr.contains("pass 2: 1 loaded (network 0, disk 0, memory 1)"))
        }
    }

    @Test func failedListAndCacheOnlyShowInTheOutput() async throws {
        try await withServer { server in
            let directory = try TemporaryDirectory()
            let missing = server.url("/missing.jpg").absoluteString
            let run = try await runCLI(["load", missing, missing, "--cache-dir", directory.url.path, "--concurrency", "1", "--json"])
            #expect(run.status == 1)
            let results = try LoadJSONContractTests.records(run)
            #expect(results.map { ($0["error"] as? [String: Any])?["code"] as? String } == ["httpStatus", "blockedFailedURL"])
            #expect(server.requestCount(for: "/missing.jpg") == 1)

            let retried = try await runCLI(["load", missing, missing, "--retry-failed", "--concurrency", "1", "--cache-dir", directory.url.path, "--json"])
            #expect(try LoadJSONContractTests.records(retried).map { ($0["error"] as? [String: Any])?["code"] as? String } == ["httpStatus", "httpStatus"])

            let cacheOnly = try await runCLI(["load", server.url("/never.jpg").absoluteString, "--from-cache-only", "--cache-dir", directory.url.path])
            #expect(cacheOnly.status == 1 && cacheOnly.stdout.contains("notCached"))
            #expect(server.requestCount(for: "/never.jpg") == 0)
        }
    }

    @Test func resizeThumbnailAndOutput() async throws {
        try await withServer { server in
            server.route("/big.jpg", .image(try sampleJPEG(width: 400, height: 300), contentType: "image/jpeg"))
            let directory = try TemporaryDirectory()
            let output = directory.url.appendingPathComponent("out")
            let url = server.url("/big.jpg").absoluteString
            let resized = try await runCLI(["load", url, "--resize", "40x20:fill", "--output", output.path, "--no-cache", "--json"])
            #expect(resized.status == 0, "\(resized.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: output.path)
            #expect(files == ["0-big.png"])
            let written = try ImageCodersManager.shared.decode(Data(contentsOf: output.appendingPathComponent("0-big.png")), options: DecodeOptions())
            #expect(written.width == 40 && written.height == 20)

            let thumb = try await runCLI(["load", url, "--max-pixel-size", "100", "--memory-only", "--cache-dir", directory.url.path, "--json"])
            let result = try LoadJSONContractTests.records(thumb).first
            #expect(result?["width"] as? Int == 100 && result?["height"] as? Int == 75)

            let bad = try await runCLI(["load", url, "--resize", "big"])
            #expect(bad.status == 64 && bad.stderr.contains("--resize"))
        }
    }

    @Test func prefetchWarmsTheCacheAndSummarizes() async throws {
        try await withServer { server in
            for index in 0..<5 { server.route("/p\(index).jpg", .image(try sampleJPEG(seed: index), contentType: "image/jpeg")) }
            let directory = try TemporaryDirectory()
            let list = directory.url.appendingPathComponent("urls.txt")
            let urls = (0..<5).map { server.url("/p\($0).jpg").absoluteString }
            try (["# five images"] + urls + [""]).joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            let run = try await runCLI(["prefetch", "--urls-file", list.path, "--cache-dir", directory.url.path, "--concurrency", "2", "--json"])
            #expect(run.status == 0, "\(run.stderr)")
            let summary = try run.json()
            #expect(summary["finished"] as? Int == 5 && summary["failed"] as? Int == 0 && summary["total"] as? Int == 5)
            #expect(run.stderr.contains("5/5"), "the progress bar reached the end")
            let cached = try await runCLI(["load", "--urls-file", list.path, "--from-cache-only", "--cache-dir", directory.url.path, "--summary-only"])
            #expect(cached.status == 0 && cached.stdout.contains("5 loaded (network 0, disk 5, memory 0)"))
            #expect(server.totalRequestCount == 5)
        }
    }
}
