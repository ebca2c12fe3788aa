import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A child process the tests start and wait for: ``start(_:_:watching:ready:)`` returns once a
/// line the process prints (on stdout or stderr) says it is ready, an event rather than a timed
/// guess. The watched stream is drained until the process ends, so it never blocks on a full
/// pipe; the other stream goes to a log file, shown when the process fails to start.
final class WatchedProcess: Sendable {
    enum Stream: Sendable { case stdout, stderr }

    let process: Process
    let logURL: URL
    /// What `ready` took from the output (a port, or anything else the caller needed).
    let readiness: String

    private init(process: Process, logURL: URL, readiness: String) {
        self.process = process
        self.logURL = logURL
        self.readiness = readiness
    }

    deinit {
        // A test that failed midway: never leave a server running.
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logURL)
    }

    /// Starts `executable` and waits until `ready` returns non-nil for the output printed so far
    /// on `watching`; records an issue and throws when the process ends first.
    static func start(_ executable: URL, _ arguments: [String], watching stream: Stream,
                      ready: @escaping @Sendable (String) -> String?) async throws -> WatchedProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-child-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        let pipe = Pipe()
        switch stream {
        case .stdout: process.standardOutput = pipe; process.standardError = log
        case .stderr: process.standardError = pipe; process.standardOutput = log
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try log.close()
        let found: (String?, String) = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let reader = pipe.fileHandleForReading
                var printed = Data()
                var resumed = false
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    guard !resumed else { continue }
                    printed.append(chunk)
                    if let value = ready(String(decoding: printed, as: UTF8.self)) {
                        resumed = true
                        continuation.resume(returning: (value, ""))
                    }
                }
                if !resumed { continuation.resume(returning: (nil, String(decoding: printed, as: UTF8.self))) }
            }
        }
        guard let readiness = found.0 else {
            process.waitUntilExit()
            let logText = String(decoding: (try? Data(contentsOf: logURL)) ?? Data(), as: UTF8.self)
            try? FileManager.default.removeItem(at: logURL)
            Issue.record("\(executable.lastPathComponent) \(arguments) exited (\(process.terminationStatus)) before it was ready:\n\(found.1)\n\(logText)")
            throw CancellationError()
        }
        return WatchedProcess(process: process, logURL: logURL, readiness: readiness)
    }

    /// Sends `signal` and waits for the exit.
    func stop(signal: Int32 = SIGTERM) async {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
        let process = process
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }

    /// What the process wrote to its log stream so far.
    var log: String { String(decoding: (try? Data(contentsOf: logURL)) ?? Data(), as: UTF8.self) }
}
