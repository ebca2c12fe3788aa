import Foundation
import Testing
import WebImage
#if canImport(Glibc)
import Glibc
#endif

/// A child process the tests start, watch and stop (`webimage serve`, nginx, tinyproxy):
/// ``start(_:_:environment:watching:ready:)`` returns once what the process printed on the
/// watched stream says it is ready, an event rather than a timed guess. A thread of its own reads
/// that stream until the process closes it, so it never blocks on a full pipe, and keeps it
/// (``output``, ``waitForOutput(_:)``); the other stream, if any, goes to a log file (``log``).
/// Both are shown when the process fails to start.
final class WatchedProcess: Sendable {
    enum Stream: Sendable { case stdout, stderr, both }

    let process: Process
    let logURL: URL
    /// What `ready` took from the output (a port, or anything else the caller needed).
    let readiness: String
    private let watched: WatchedOutput

    private init(process: Process, logURL: URL, readiness: String, watched: WatchedOutput) {
        self.process = process
        self.logURL = logURL
        self.readiness = readiness
        self.watched = watched
    }

    deinit {
        // A test that failed midway: never leave a server running.
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logURL)
    }

    /// Starts `executable` (standard input empty; `environment` replaces the inherited one) and
    /// waits until `ready` returns non-nil for the output printed so far on `watching`; records
    /// an issue and throws when the process ends first.
    static func start(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil, watching stream: Stream,
                      ready: @escaping @Sendable (String) -> String?) async throws -> WatchedProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-child-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        let pipe = Pipe()
        switch stream {
        case .stdout: process.standardOutput = pipe; process.standardError = log
        case .stderr: process.standardError = pipe; process.standardOutput = log
        case .both: process.standardOutput = pipe; process.standardError = pipe
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try log.close()
        let watched = WatchedOutput(draining: pipe.fileHandleForReading)
        guard let readiness = await watched.first(where: ready) else {
            await process.exited()
            let logText = String(decoding: (try? Data(contentsOf: logURL)) ?? Data(), as: UTF8.self)
            try? FileManager.default.removeItem(at: logURL)
            Issue.record("\(executable.lastPathComponent) \(arguments) exited (\(process.terminationStatus)) before it was ready:\n\(watched.text)\n\(logText)")
            throw CancellationError()
        }
        return WatchedProcess(process: process, logURL: logURL, readiness: readiness, watched: watched)
    }

    /// Sends `signal` (unless the process has ended) and waits for the exit.
    func stop(signal: Int32 = SIGTERM) async {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
        await process.exited()
    }

    /// Everything the process printed so far on the watched stream.
    var output: String { watched.text }

    /// Suspends until the watched output contains `text` (`true`) or the process closes that
    /// stream without printing it (`false`).
    func waitForOutput(_ text: String) async -> Bool {
        await watched.first { $0.contains(text) ? text : nil } != nil
    }

    /// Suspends until the watched stream closes (the process, and any child sharing the stream,
    /// has ended), then returns everything printed on it.
    func outputToEnd() async -> String {
        _ = await watched.first { _ in nil }
        return watched.text
    }

    /// What the process wrote to its log stream so far.
    var log: String { String(decoding: (try? Data(contentsOf: logURL)) ?? Data(), as: UTF8.self) }
}

/// A child's output stream, read to its end on a thread of its own and kept; tasks wait for what
/// they need to see in it.
private final class WatchedOutput: Sendable {
    private struct Waiter {
        var match: @Sendable (String) -> String?
        var continuation: CheckedContinuation<String?, Never>
    }

    private struct State {
        var printed = Data()
        var ended = false
        var waiters: [Waiter] = []
    }

    private let state = Locked(State())

    /// Starts reading `reader` until it closes.
    init(draining reader: FileHandle) {
        // A thread of its own, blocked in read: on the global queue, a few drains would take
        // every worker (it is as wide as the CPU count) and starve everything else queued there.
        Thread { [state] in
            while true {
                let chunk = reader.availableData
                let ended = chunk.isEmpty
                let ready = state.withLock { state -> [(CheckedContinuation<String?, Never>, String?)] in
                    state.printed.append(chunk)
                    state.ended = ended
                    let text = String(decoding: state.printed, as: UTF8.self)
                    var ready: [(CheckedContinuation<String?, Never>, String?)] = []
                    state.waiters.removeAll { waiter in
                        if let found = waiter.match(text) { ready.append((waiter.continuation, found)); return true }
                        if ended { ready.append((waiter.continuation, nil)); return true }
                        return false
                    }
                    return ready
                }
                for (continuation, found) in ready { continuation.resume(returning: found) }
                if ended { return }
            }
        }.start()
    }

    /// Everything read so far.
    var text: String { state.withLock { String(decoding: $0.printed, as: UTF8.self) } }

    /// Suspends until `match` returns non-nil for everything read so far (that value), or the
    /// stream ends first (`nil`).
    func first(where match: @escaping @Sendable (String) -> String?) async -> String? {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> String?? in
                if let found = match(String(decoding: state.printed, as: UTF8.self)) { return .some(found) }
                if state.ended { return .some(nil) }
                state.waiters.append(Waiter(match: match, continuation: continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
