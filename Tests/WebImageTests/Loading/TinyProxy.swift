import Foundation
import Testing
import WebImage
import WebImageTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP proxy for the tests: Debian's `tinyproxy`, started in the foreground on a free
/// loopback port with a generated configuration, its log (stdout and stderr, a ``WatchedProcess``)
/// kept so a test can wait for a line it must print (an event, not a timed guess).
/// `scripts/install-deps.sh` installs it as an optional test dependency; the proxy suites are
/// skipped, saying so, when it is missing.
final class TinyProxy: Sendable {
    static let executable = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"]
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
    static var isAvailable: Bool { executable != nil }

    let port: Int
    private let child: WatchedProcess
    private let directory: URL

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
        do {
            let child = try await WatchedProcess.start(URL(fileURLWithPath: executable), ["-d", "-c", configURL.path], watching: .both) {
                $0.contains("Accepting connections") ? "" : nil
            }
            return TinyProxy(port: port, child: child, directory: directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    private init(port: Int, child: WatchedProcess, directory: URL) {
        self.port = port
        self.child = child
        self.directory = directory
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Everything tinyproxy printed so far.
    var log: String { child.output }

    /// Suspends until the log contains `text` (`true`) or tinyproxy ends without printing it (`false`).
    func waitForLog(_ text: String) async -> Bool {
        await child.waitForOutput(text)
    }

    /// Stops tinyproxy and waits until it has exited.
    ///
    /// SIGKILL, not SIGTERM: a child spawned from a thread that blocks signals (dispatch's
    /// workers do) inherits the mask, and such a tinyproxy never sees SIGTERM.
    func stop() async {
        await child.stop(signal: SIGKILL)
    }
}

/// Runs `body` with a tinyproxy of its own, stopped afterwards even on failure.
func withTinyProxy<T: Sendable>(connectPorts: [Int] = [], basicAuth: (user: String, password: String)? = nil,
                                _ body: (TinyProxy) async throws -> T) async throws -> T {
    let proxy = try await TinyProxy.start(connectPorts: connectPorts, basicAuth: basicAuth)
    return try await withShutdown(of: proxy, { await $0.stop() }, body)
}
