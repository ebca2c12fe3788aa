import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program and reports its peak resident memory as the kernel accounted it for that one
/// process (`wait4`'s `ru_maxrss`), so tests running beside it do not blur the number.
enum PeakMemory {
    struct Run {
        var status: Int32
        var output: String
        /// Peak resident set, in KB.
        var peakKB: Int
    }

    static func run(_ executable: URL, _ arguments: [String]) throws -> Run {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("peak-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        return Run(status: exitStatus, output: output, peakKB: Int(usage.ru_maxrss))
    }
}
