import Foundation
import Testing
@testable import WebImage

/// A writer killed with SIGKILL at random moments mid-write never leaves an entry that reads
/// wrongly: every entry that reads at all reads exactly what was written.
@Suite struct CrashSafetyTests {
    /// The `webimage` binary built next to the test bundle (`swift build --build-tests` builds it).
    static let binary: URL? = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [beside.appendingPathComponent("webimage"),
                          packageRoot.appendingPathComponent(".build/release/webimage"),
                          packageRoot.appendingPathComponent(".build/debug/webimage")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    @Test(.enabled(if: binary != nil, "the webimage binary is not built (swift build --build-tests builds it)"))
    func killedWriterNeverLeavesACorruptEntry() async throws {
        let directory = try TemporaryDirectory()
        var killedWithEntries = 0
        for round in 0..<20 {
            // The writer is read and waited for on a thread of its own: blocking reads on one of
            // the two cooperative threads for the minute this test takes starved other suites.
            let cachePath = directory.url.path
            let terminationReason = try await onOwnThread { () throws -> Process.TerminationReason in
                let process = Process()
                process.executableURL = Self.binary
                process.arguments = ["cache", "_write-loop", "--cache-dir", cachePath, "--namespace", "crash"]
                let output = Pipe()
                process.standardOutput = output
                try process.run()
                // Let it finish a few entries (it prints each key once stored), then kill it mid-stream.
                let handle = output.fileHandleForReading
                var received = Data()
                let wanted = 2 + round % 5
                while received.filter({ $0 == 10 }).count < wanted {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    received.append(chunk)
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return process.terminationReason
            }
            #expect(terminationReason == .uncaughtSignal)
            let cache = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url.appendingPathComponent("crash")))
            var readable = 0
            for index in 0..<8 {
                let key = "entry-\(index)"
                guard let entry = await cache.entry(forKey: key) else { continue }
                readable += 1
                let expected = expectedPayload(key: key, length: entry.data.count)
                #expect(entry.data == expected && entry.metadata.originalURL == key, "round \(round) \(key)")
                #expect([200_000, 300_000, 400_000, 500_000, 600_000].contains(entry.data.count))
            }
            if readable > 0 { killedWithEntries += 1 }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.appendingPathComponent("crash").path)
            #expect(!leftovers.contains { $0.hasPrefix(".tmp-") }, "temporary files are cleaned when the cache opens")
        }
        #expect(killedWithEntries == 20)
    }

    private func expectedPayload(key: String, length: Int) -> Data {
        let seed = Array(key.utf8)
        return Data((0..<length).map { seed[$0 % seed.count] &+ UInt8(truncatingIfNeeded: $0 / seed.count) })
    }
}
