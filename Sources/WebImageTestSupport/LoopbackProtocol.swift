// Foundation, not FoundationEssentials: the certificate is made by running `openssl` (Process).
import Foundation

/// The protocol a loader test runs over, so one test body checks HTTP/1.1 and HTTP/2 alike
/// (`@Test(arguments: LoopbackProtocol.allCases)`).
public enum LoopbackProtocol: String, Sendable, CaseIterable, CustomStringConvertible {
    /// HTTP/1.1 over plain TCP.
    case http1
    /// HTTP/2 over TLS, chosen by ALPN (the server offers `h2` and `http/1.1`).
    case h2
    /// HTTP/2 over plain TCP by prior knowledge.
    case h2c

    /// The protocols where TLS is not the point of a test: HTTP/1.1 and h2c.
    public static let plain: [LoopbackProtocol] = [.http1, .h2c]

    public var description: String { rawValue }

    /// Whether the protocol is HTTP/2.
    public var isHTTP2: Bool { self != .http1 }
}

/// Runs `body` with a fresh loopback server speaking `http` (``LoopbackProtocol/h2``: HTTPS with
/// a self-signed certificate made once per process, see ``LoopbackServer/certificatePEM``), shut
/// down afterwards even on failure. The server is ``LoopbackServer/current`` while `body` runs, so
/// the tests' loader helpers can speak its protocol and trust its certificate.
public func withServer<T: Sendable>(_ http: LoopbackProtocol, maxConcurrentStreams: Int = 100,
                                    isolation: isolated (any Actor)? = #isolation,
                                    _ body: (LoopbackServer) async throws -> T) async throws -> T {
    let server: LoopbackServer
    switch http {
    case .http1: server = try await LoopbackServer.start()
    case .h2: server = try await LoopbackServer.start(tls: try LoopbackTLS.loopback(), http2: true,
                                                      maxConcurrentStreams: maxConcurrentStreams)
    case .h2c: server = try await LoopbackServer.start(http2: true, maxConcurrentStreams: maxConcurrentStreams)
    }
    return try await withShutdown(of: server, { try await $0.shutdown() }) { server in
        try await LoopbackServer.$current.withValue(server) { try await body(server) }
    }
}

extension LoopbackTLS {
    /// Why ``loopback()`` has no certificate.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    private static let made: Result<LoopbackTLS, Unavailable> = {
        let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        guard let openssl else { return .failure(Unavailable(description: "the openssl command is not installed")) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-h2-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = directory.appendingPathComponent("key.pem").path, certificate = directory.appendingPathComponent("cert.pem").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                 "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                                 "-keyout", key, "-out", certificate]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { return .failure(Unavailable(description: "openssl req failed")) }
            return .success(try LoopbackTLS(certificateFile: certificate, privateKeyFile: key))
        } catch {
            return .failure(Unavailable(description: "\(error)"))
        }
    }()

    /// One self-signed certificate for `127.0.0.1` and `localhost` per test process (made with
    /// `openssl` the first time), for the HTTP/2-over-TLS runs of loader tests.
    public static func loopback() throws -> LoopbackTLS {
        try made.get()
    }
}

/// A client configuration a test can point at a loopback server: it trusts certificates and can
/// be told to speak HTTP/2 only. The test targets conform the HTTP stack's, the loader's and the
/// downloader's configurations, so one ``speaking(_:)`` serves them all.
public protocol LoopbackClientConfiguration {
    /// Extra certificates to trust, in PEM.
    var trustedCertificatesPEM: [String] { get set }
    /// Speak HTTP/2 only (h2 over TLS, h2c by prior knowledge over plain http).
    mutating func requireHTTP2()
}

extension LoopbackClientConfiguration {
    /// This configuration, speaking the protocol of `server` and trusting its certificate:
    /// HTTP/2 only against an HTTP/2 server; unchanged for `nil` (outside `withServer(_:)`).
    public func speaking(_ server: LoopbackServer?) -> Self {
        guard let server else { return self }
        var configuration = self
        if let pem = server.certificatePEM, !configuration.trustedCertificatesPEM.contains(pem) {
            configuration.trustedCertificatesPEM.append(pem)
        }
        if server.isHTTP2 { configuration.requireHTTP2() }
        return configuration
    }
}
