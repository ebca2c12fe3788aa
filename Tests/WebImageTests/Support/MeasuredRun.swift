import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// One run of the built `webimage` binary with what it cost: its peak resident memory and CPU
/// time as the kernel accounted them, measured by GNU time (`%M`, `%U`, `%S`), not sampled.
///
/// GNU time and not `wait4` here: a child spawned straight from the test process (posix_spawn
/// is vfork) inherits the test process's own peak RSS into its `ru_maxrss` at `exec`, so it would
/// read hundreds of MB whenever other tests are decoding. GNU time forks the binary from a
/// process of about 2 MB.
struct MeasuredRun: Sendable {
    var status: Int32
    var stdout: String
    /// The most memory the binary ever had resident.
    var peakMemoryBytes: Int
    /// User plus system CPU time.
    var cpuSeconds: Double

    /// The first line of stdout parsed as a JSON object (`decode --json` prints one per file).
    func json() throws -> [String: Any] {
        let line = stdout.split(separator: "\n").first.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// The error code `decode --json` reported, if any.
    func errorCode() throws -> String? {
        (try json()["error"] as? [String: Any])?["code"] as? String
    }

    /// Where GNU time is (Debian package `time`, in `scripts/install-deps.sh`).
    static let timeTool = "/usr/bin/time"
    static let canMeasure = CrashSafetyTests.binary != nil && FileManager.default.isExecutableFile(atPath: timeTool)
}

/// Runs the `webimage` binary with `arguments` under GNU time, on a dispatch thread so the
/// cooperative pool never blocks while it runs.
func runMeasured(_ arguments: [String]) async throws -> MeasuredRun {
    let binary = try #require(CrashSafetyTests.binary)
    return try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-measured-\(UUID().uuidString)")
            let output = base.appendingPathExtension("out"), usageFile = base.appendingPathExtension("usage")
            defer {
                try? FileManager.default.removeItem(at: output)
                try? FileManager.default.removeItem(at: usageFile)
            }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let command = [MeasuredRun.timeTool, "-f", "%M %U %S", "-o", usageFile.path, binary.path] + arguments
            let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, MeasuredRun.timeTool, &actions, nil, argv, environ)
            guard spawned == 0 else {
                continuation.resume(throwing: POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL))
                return
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else {
                    continuation.resume(throwing: POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECHILD))
                    return
                }
            }
            let stdout = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            // The last line is the format's; a line about a non-zero exit status may precede it.
            let usage = ((try? String(contentsOf: usageFile, encoding: .utf8)) ?? "")
                .split(separator: "\n").last.map { $0.split(separator: " ").compactMap { Double($0) } } ?? []
            guard usage.count == 3 else {
                continuation.resume(throwing: POSIXError(.EIO))
                return
            }
            continuation.resume(returning: MeasuredRun(status: (status >> 8) & 0xFF, stdout: stdout,
                                                       peakMemoryBytes: Int(usage[0]) * 1024, cpuSeconds: usage[1] + usage[2]))
        }
    }
}
