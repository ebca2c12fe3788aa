import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Finds a command on the usual Debian paths (tests run with whatever PATH `swift test` got).
enum ExternalTool {
    static func path(_ name: String, extra: [String] = []) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        return (extra + directories.map { "\($0)/\(name)" }).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let nginx = path("nginx")
    static let chromium = path("chromium", extra: ["/usr/lib/chromium/chromium"])

    /// The package root, for the shipped files the tests run (deploy/).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A free loopback port for a server that cannot be told to pick one (nginx).
    static func freePort() throws -> Int {
        let bound = try boundPort()
        close(bound.descriptor)
        return bound.port
    }

    /// A loopback port bound by a socket that does not listen: a connection to it is refused for
    /// as long as `descriptor` stays open, and no other server can take the port meanwhile.
    static func boundPort() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        if !bound { close(descriptor) }
        try #require(bound, "could not bind a loopback port")
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// Prometheus text exposition, as `/metrics` serves it: sample lines `name{labels} value`.
struct PrometheusText {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var samples: [Sample] = []

    init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let value = Double(parts[1]) else { continue }
            let series = String(parts[0])
            var name = series, labels: [String: String] = [:]
            if let brace = series.firstIndex(of: "{"), series.hasSuffix("}") {
                name = String(series[..<brace])
                let inner = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                for pair in inner.split(separator: ",") {
                    let keyValue = pair.split(separator: "=", maxSplits: 1)
                    guard keyValue.count == 2 else { continue }
                    labels[String(keyValue[0])] = keyValue[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
    }

    /// The sum of every sample of `name` whose labels include `matching`.
    func sum(_ name: String, matching: [String: String] = [:]) -> Double {
        samples.filter { sample in
            sample.name == name && matching.allSatisfy { sample.labels[$0.key] == $0.value }
        }.reduce(0) { $0 + $1.value }
    }
}
