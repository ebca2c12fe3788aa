import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// `webimage load local:///PATH --local-root DIR`: the real binary reads inside the root and
/// reports a way out as a `rejected` error in its JSON contract.
@Suite("webimage load: local sources", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .timeLimit(.minutes(1)))
struct CLILocalRootTests {
    @Test func loadsInsideTheRootAndRefusesTheWayOut() async throws {
        let files = try HostileLocalRoot()
        let cache = try TemporaryDirectory()
        let run = try await runCLI(["load", "local:///sub/deeper/b%20image.png", "local:///out-link.png", "local:///fifo.png",
                                    "--local-root", files.root.path, "--cache-dir", cache.url.path, "--json"])
        let records = try LoadJSONContractTests.records(run)
        #expect(records.count == 3, "\(run.stderr)")
        // Records come as loads end: found by URL.
        func record(_ url: String) -> [String: Any]? { records.first { $0["url"] as? String == url } }
        func code(_ url: String) -> String? { (record(url)?["error"] as? [String: Any])?["code"] as? String }
        #expect(record("local:///sub/deeper/b%20image.png")?["status"] as? String == "ok")
        #expect(record("local:///sub/deeper/b%20image.png")?["width"] as? Int == 12)
        #expect(code("local:///out-link.png") == "rejected")
        #expect(code("local:///fifo.png") == "fileSystem")
        #expect(!run.stdout.contains("outside the root"))

        let withoutRoot = try await runCLI(["load", "local:///a.png", "--cache-dir", cache.url.path, "--json"])
        let refused = try LoadJSONContractTests.records(withoutRoot)
        #expect((refused.first?["error"] as? [String: Any])?["code"] as? String == "invalidURL")
    }
}
