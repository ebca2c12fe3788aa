import Foundation
import Testing
import WebImageTestSupport

/// `webimage serve` as a process: the flags, the settings printed on start, SIGTERM.
@Suite("webimage serve: the command", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
struct ServerCLITests {
    @Test func servesPrintsItsSettingsAndStopsOnSIGTERM() async throws {
        let binary = try #require(CrashSafetyTests.binary)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--concurrency", "3", "--allow-source", "images.example:8080",
                             "--cache-control-max-age", "77", "--signing-key", "hidden-key", "--max-source-bytes", "1000000",
                             "--max-source-pixels", "5000000", "--memory-budget-mib", "256"]
        process.environment = ["WEBIMAGE_HOST": "127.0.0.1", "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read until the listening line, on a dispatch thread (blocking reads).
        let printed: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var text = ""
                while !text.contains("listening on"), !text.hasSuffix("\n\n") {
                    let chunk = out.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                    if text.contains("listening on"), text.hasSuffix("\n") { break }
                }
                continuation.resume(returning: text)
            }
        }
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
        let rest: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        #expect(process.terminationStatus == 0)
        #expect(rest.contains("stopped"))
    }
}
