import Foundation
import Testing
import WebImageTestSupport

/// `webimage serve` as a process: the flags, the settings printed on start, SIGTERM.
@Suite("webimage serve: the command", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
struct ServerCLITests {
    @Test func servesPrintsItsSettingsAndStopsOnSIGTERM() async throws {
        let binary = try #require(CrashSafetyTests.binary)
        let arguments = ["serve", "--port", "0", "--concurrency", "3", "--allow-source", "images.example:8080",
                         "--cache-control-max-age", "77", "--signing-key", "hidden-key", "--max-source-bytes", "1000000",
                         "--max-source-pixels", "5000000", "--memory-budget-mib", "256"]
        // Everything printed up to the end of the listening line.
        let child = try await WatchedProcess.start(binary, arguments, environment: ["WEBIMAGE_HOST": "127.0.0.1", "PATH": "/usr/bin:/bin"],
                                                   watching: .stdout) { $0.contains("listening on") && $0.hasSuffix("\n") ? $0 : nil }
        let process = child.process
        let printed = child.readiness
        #expect(printed.contains("concurrency: 3"))
        #expect(printed.contains("allow-source: images.example:8080"))
        #expect(printed.contains("cache-control-max-age: 77"))
        #expect(printed.contains("max-source-pixels: 5000000"))
        #expect(printed.contains("memory-budget-mib: 256 (memory cache 64 MiB, renders 192 MiB, animation frames 96 MiB)"))
        #expect(printed.contains("signing-key: (set)") && !printed.contains("hidden-key"))
        let line = try #require(printed.split(separator: "\n").first { $0.contains("listening on http://127.0.0.1:") })
        let port = try #require(Int(line.split(separator: ":").last ?? ""))
        let health = try await ServerTestClient.send(port: port, "/healthz")
        #expect(health.status == 200)
        kill(process.processIdentifier, SIGTERM)
        let rest = String(await child.outputToEnd().dropFirst(printed.count))
        await process.exited()
        #expect(process.terminationStatus == 0)
        #expect(rest.contains("stopped"))
    }
}
