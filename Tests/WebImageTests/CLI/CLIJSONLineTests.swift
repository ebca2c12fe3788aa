import Foundation
import Testing

/// The CLI's `--json` lines pinned to the byte: keys sorted, `/` unescaped (paths and URLs stay
/// readable), quotes, backslashes and controls escaped, non-ASCII as UTF-8.
@Suite("webimage --json lines", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
struct CLIJSONLineTests {
    @Test func cacheStatsLineIsSortedAndEscaped() async throws {
        let directory = try TemporaryDirectory()
        #expect(directory.url.path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        let root = directory.url.appendingPathComponent("q\"b\\t\tu\u{1}é", isDirectory: true)
        let run = try await runCLI(["cache", "stats", "--json", "--cache-dir", root.path])
        #expect(run.status == 0, "\(run.stderr)")
        let escapedRoot = directory.url.path + #"/q\"b\\t\tu\u0001é"#
        #expect(run.stdout == #"{"count":0,"directory":""# + escapedRoot + #"/default","totalSize":0}"# + "\n")
    }
}
