import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `webimage serve` child process on 127.0.0.1 with a system-chosen port (`--port 0`): ready
/// once it prints the address it listens on.
final class ServeInstance: Sendable {
    let child: WatchedProcess
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    static var isAvailable: Bool { CrashSafetyTests.binary != nil }

    private init(child: WatchedProcess, port: Int) {
        self.child = child
        self.port = port
    }

    /// Starts one; `environment` is added to the test process's.
    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> ServeInstance {
        let binary = try #require(CrashSafetyTests.binary)
        let child = try await WatchedProcess.start(binary, ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments,
                                                   environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                                                   watching: .stdout, ready: listeningPort)
        return ServeInstance(child: child, port: try #require(Int(child.readiness)))
    }

    /// The port in a line like `... listening on http://127.0.0.1:PORT`.
    @Sendable private static func listeningPort(in text: String) -> String? {
        for line in text.split(separator: "\n") {
            guard let range = line.range(of: "listening on http://") else { continue }
            let address = line[range.upperBound...].prefix { !$0.isWhitespace && $0 != "/" }
            if let colon = address.lastIndex(of: ":") {
                let digits = address[address.index(after: colon)...].prefix(while: \.isNumber)
                if !digits.isEmpty { return String(digits) }
            }
        }
        return nil
    }

    /// SIGKILL: no graceful shutdown, what a crash looks like to nginx.
    func kill() async { await child.stop(signal: SIGKILL) }

    /// SIGTERM, then waits for the exit.
    func stop() async { await child.stop() }

    /// The instance's `/metrics`, fetched directly (never through the proxy).
    func metrics() async throws -> PrometheusText {
        let response = try await ServerTestClient.send(port: port, "/metrics")
        try #require(response.status == 200, "GET /metrics: \(response.status)")
        return PrometheusText(String(decoding: response.body, as: UTF8.self))
    }
}
