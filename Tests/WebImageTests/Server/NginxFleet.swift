import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Debian's nginx running the shipped `deploy/nginx.conf` in a scratch prefix, in front of the
/// given instances.
///
/// The file is used as shipped except for what a deployment edits too: its `listen` port (a free
/// loopback port here) and `instances.conf` (written here with the instances' ports). nginx runs
/// in the foreground as the test's child, with notices on stderr: its "start worker process"
/// line comes after the listening socket is bound, so the fleet takes connections once
/// ``start(instances:)`` returns.
final class NginxFleet: Sendable {
    let prefix: URL
    let port: Int
    let child: WatchedProcess
    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(prefix: URL, port: Int, child: WatchedProcess) {
        self.prefix = prefix
        self.port = port
        self.child = child
    }

    deinit { try? FileManager.default.removeItem(at: prefix) }

    static var isAvailable: Bool { ExternalTool.nginx != nil }

    static func start(instances: [Int]) async throws -> NginxFleet {
        let nginx = try #require(ExternalTool.nginx)
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-fleet-\(UUID().uuidString)")
        for directory in ["logs", "temp", "cache"] {
            try FileManager.default.createDirectory(at: prefix.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        // Run as root, nginx's workers drop to an unprivileged user: let them write the cache.
        for directory in ["", "temp", "cache"] { chmod(prefix.appendingPathComponent(directory).path, 0o777) }
        let shipped = try String(contentsOf: ExternalTool.packageRoot.appendingPathComponent("deploy/nginx.conf"), encoding: .utf8)
        let listen = "        listen 8080;\n"
        try #require(shipped.components(separatedBy: listen).count == 2, "deploy/nginx.conf has no single `listen 8080;` line")
        let port = try ExternalTool.freePort()
        let config = shipped.replacingOccurrences(of: listen, with: "        listen 127.0.0.1:\(port);\n")
        let configURL = prefix.appendingPathComponent("nginx.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let servers = instances.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=10s;\n" }.joined()
        try servers.write(to: prefix.appendingPathComponent("instances.conf"), atomically: true, encoding: .utf8)
        let child = try await WatchedProcess.start(
            URL(fileURLWithPath: nginx),
            ["-p", prefix.path + "/", "-c", configURL.path, "-e", "stderr", "-g", "daemon off; error_log stderr notice;"],
            watching: .stderr
        ) { text in text.contains("start worker process") ? "ready" : nil }
        return NginxFleet(prefix: prefix, port: port, child: child)
    }

    /// Graceful stop (SIGQUIT): returns once every worker has finished and logged its requests.
    func stop() async { await child.stop(signal: SIGQUIT) }

    /// The access log: one entry per request, in the shipped `webimage` format.
    func accessLog() throws -> [AccessLogEntry] {
        let text = try String(contentsOf: prefix.appendingPathComponent("logs/access.log"), encoding: .utf8)
        return text.split(separator: "\n").compactMap(AccessLogEntry.init)
    }

    func errorLog() -> String {
        (try? String(contentsOf: prefix.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
    }
}

/// One line of the shipped `webimage` log format.
struct AccessLogEntry {
    var uri: String
    var status: Int
    var cache: String
    /// The instance that finally answered (`$upstream_addr` lists every one tried), or nil.
    var upstreamPort: Int?
    var upstreamsTried: Int

    init?(_ line: Substring) {
        guard let request = line.split(separator: "\"").dropFirst().first else { return nil }
        let requestParts = request.split(separator: " ")
        guard requestParts.count >= 2 else { return nil }
        uri = String(requestParts[1])
        let rest = line.split(separator: "\"").dropFirst(2).joined(separator: "\"")
        status = Int(rest.split(separator: " ").first ?? "") ?? 0
        func field(_ name: String) -> String {
            guard let range = rest.range(of: " \(name)=") else { return "" }
            var value = rest[range.upperBound...]
            // upstream_addr is "a, b" when nginx tried more than one instance.
            if let next = value.range(of: #" [a-z_]+="#, options: .regularExpression) { value = value[..<next.lowerBound] }
            return value.trimmingCharacters(in: .whitespaces)
        }
        cache = field("cache")
        let upstreams = field("upstream").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0 != "-" }
        upstreamsTried = upstreams.count
        upstreamPort = upstreams.last.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
    }
}
