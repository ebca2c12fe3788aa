import Foundation
import Testing
import WebImage
import WebImageTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP proxy for the tests: Debian's `tinyproxy`, started in the foreground on a free
/// loopback port with a generated configuration, its log (stderr) kept so a test can wait for a
/// line it must print (an event, not a timed guess). `scripts/install-deps.sh` installs it as an
/// optional test dependency; the proxy suites are skipped, saying so, when it is missing.
final class TinyProxy: Sendable {
    static let executable = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"]
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
    static var isAvailable: Bool { executable != nil }

    private struct Waiter {
        var text: String
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var log = ""
        var ended = false
        var waiters: [Waiter] = []
    }

    let port: Int
    private let process: Process
    private let directory: URL
    private let state = Locked(State())

    /// `http://127.0.0.1:<port>`, or with `user:password@` in front of the host.
    func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)"
    }

    /// Starts tinyproxy allowing 127.0.0.1, tunnelling to `connectPorts` only (any port when
    /// empty), asking for `basicAuth` when given; returns once it accepts connections.
    static func start(connectPorts: [Int] = [], basicAuth: (user: String, password: String)? = nil) async throws -> TinyProxy {
        let executable = try #require(executable)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // tinyproxy takes no port 0.
        let port = try ExternalTool.freePort()
        var config = ["Port \(port)", "Listen 127.0.0.1", "Timeout 30", "MaxClients 64", "Allow 127.0.0.1", "LogLevel Info"]
        config += connectPorts.map { "ConnectPort \($0)" }
        if let basicAuth { config.append("BasicAuth \(basicAuth.user) \(basicAuth.password)") }
        let configURL = directory.appendingPathComponent("tinyproxy.conf")
        try (config.joined(separator: "\n") + "\n").write(to: configURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-d", "-c", configURL.path]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let proxy = TinyProxy(port: port, process: process, directory: directory)
        proxy.drain(pipe.fileHandleForReading)
        guard await proxy.waitForLog("Accepting connections") else {
            Issue.record("tinyproxy exited before it was ready:\n\(proxy.log)")
            throw CancellationError()
        }
        return proxy
    }

    private init(port: Int, process: Process, directory: URL) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    deinit {
        // A test that failed midway: never leave a proxy running.
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Everything tinyproxy printed so far.
    var log: String { state.withLock { $0.log } }

    /// Suspends until the log contains `text` (`true`) or tinyproxy ends without printing it (`false`).
    func waitForLog(_ text: String) async -> Bool {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool? in
                if state.log.contains(text) { return true }
                if state.ended { return false }
                state.waiters.append(Waiter(text: text, continuation: continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Stops tinyproxy and waits until its output closes (it has exited).
    ///
    /// SIGKILL, not SIGTERM: a child spawned from a thread that blocks signals (dispatch's
    /// workers do) inherits the mask, and such a tinyproxy never sees SIGTERM.
    func stop() async {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        _ = await waitForLog("\u{0}never printed\u{0}")
    }

    /// Reads the output on a thread of its own until tinyproxy closes it, waking the waiters it satisfies.
    private func drain(_ reader: FileHandle) {
        // A thread of its own, blocked in read: on the global queue, a few drains would take
        // every worker (it is as wide as the CPU count) and starve everything else queued there.
        Thread { [state] in
            while true {
                let chunk = reader.availableData
                let ended = chunk.isEmpty
                let ready = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
                    state.log += String(decoding: chunk, as: UTF8.self)
                    state.ended = ended
                    var ready: [(CheckedContinuation<Bool, Never>, Bool)] = []
                    state.waiters.removeAll { waiter in
                        if state.log.contains(waiter.text) { ready.append((waiter.continuation, true)); return true }
                        if ended { ready.append((waiter.continuation, false)); return true }
                        return false
                    }
                    return ready
                }
                for (continuation, found) in ready { continuation.resume(returning: found) }
                if ended { return }
            }
        }.start()
    }
}

/// Runs `body` with a tinyproxy of its own, stopped afterwards even on failure.
func withTinyProxy<T: Sendable>(connectPorts: [Int] = [], basicAuth: (user: String, password: String)? = nil,
                                _ body: (TinyProxy) async throws -> T) async throws -> T {
    let proxy = try await TinyProxy.start(connectPorts: connectPorts, basicAuth: basicAuth)
    return try await withShutdown(of: proxy, { await $0.stop() }, body)
}
