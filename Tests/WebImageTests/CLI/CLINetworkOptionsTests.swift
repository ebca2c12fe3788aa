import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The network options of `webimage load`: extreme values are refused with a message (never a
/// trap), bad headers are refused before anything is sent.
@Suite("webimage network options", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct CLINetworkOptionsTests {
    @Test(arguments: [["--timeout", "inf"], ["--timeout", "nan"], ["--timeout", "-1"], ["--timeout", "0"]])
    func extremeTimeoutsAreRefusedWithAMessage(_ option: [String]) async throws {
        let directory = try TemporaryDirectory()
        let run = try await runCLI(["load", "http://127.0.0.1:9/a.png", "--cache-dir", directory.url.path] + option)
        #expect(run.status != 0)
        #expect(run.status < 128, "the process was killed by a signal (a trap): \(run.status)")
        #expect(run.stderr.contains("--timeout"), "\(run.stderr)")
        #expect(!run.stderr.contains("runtime failure"), "\(run.stderr)")
    }

    @Test func aHugeTimeoutIsClampedNotTrapped() async throws {
        try await withServer { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let directory = try TemporaryDirectory()
            let run = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", directory.url.path,
                                        "--timeout", "1e300"])
            #expect(run.status == 0, "\(run.stderr)")
        }
    }

    @Test func aHeaderWithALineBreakIsRefused() async throws {
        try await withServer { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let directory = try TemporaryDirectory()
            let run = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", directory.url.path,
                                        "--header", "X-A: 1\r\nInjected: yes"])
            #expect(run.status != 0)
            #expect(run.stderr.contains("--header"), "\(run.stderr)")
            #expect(server.totalRequestCount == 0)
        }
    }
}
