import Foundation
import Testing
import WebImageHTTP
import WebImageSupport
import WebImageTestSupport

/// The system's trust roots read from a hashed certificate directory (OpenSSL's layout), as on
/// Debian's /etc/ssl/certs: a directory holding the loopback server's certificate under its
/// subject hash makes the server trusted with no other trust given; one without it does not.
@Suite("System trust roots", .enabled(if: (try? LoopbackTLS.loopback()) != nil, "the openssl command is not installed"))
struct SystemTrustRootsTests {
    @Test func aHashedDirectoryIsReadForTheSystemsRoots() async throws {
        try await WebImageTestSupport.withServer(.h2) { server in
            let pem = try #require(server.certificatePEM)
            try await withHashedDirectory(holding: pem) { directory in
                let outcome = try await load(server.url("/a"), server: server, systemTrustDirectory: directory)
                #expect(outcome.error == nil)
                #expect(outcome.data?.count == 10_000)
            }
            // The real system directory does not hold the test's self-signed certificate.
            let untrusted = try await load(server.url("/a"), server: server, systemTrustDirectory: SystemTrustRoots.defaultDirectory)
            guard case .untrustedCertificate? = untrusted.error else {
                Issue.record("expected untrustedCertificate, got \(String(describing: untrusted.error))")
                return
            }
        }
    }

    @Test func onlyHashedNamesMakeADirectoryHashed() {
        #expect(SystemTrustRoots.isHashedCertificateName("0a1b2c3d.0"))
        #expect(SystemTrustRoots.isHashedCertificateName("ABCDEF01.12"))
        #expect(!SystemTrustRoots.isHashedCertificateName("ca-certificates.crt"))
        #expect(!SystemTrustRoots.isHashedCertificateName("0a1b2c3d.r0"))
        #expect(!SystemTrustRoots.isHashedCertificateName("0a1b2c3.0"))
        #expect(!SystemTrustRoots.isHashedCertificateName("0a1b2c3d."))
        #expect(!SystemTrustRoots.isHashedCertificateName("0a1b2c3g.0"))
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-empty-\(UUID().uuidString)")
        #expect((try? FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)) != nil)
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(SystemTrustRoots.hashedDirectory(empty.path) == nil)
        #expect(SystemTrustRoots.hashedDirectory("/nonexistent-\(UUID().uuidString)") == nil)
    }

    private func load(_ url: URL, server: LoopbackServer, systemTrustDirectory: String) async throws -> HTTPOutcome {
        server.route("/a", LoopbackResponse(body: .bytes(testBytes(10_000))))
        // Not `withSession`: it would trust the server's certificate outright.
        var configuration = HTTPSession.Configuration.testing()
        configuration.systemTrustDirectory = systemTrustDirectory
        return try await withShutdown(of: HTTPSession(configuration: configuration), { await $0.shutdown() }) { session in
            await session.load(HTTPLoadRequest(url: url))
        }
    }

    /// A temporary directory holding `pem` as `<subject hash>.0`, the hash from `openssl x509 -hash`.
    private func withHashedDirectory<T>(holding pem: String, _ body: (String) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("server.pem")
        try Data(pem.utf8).write(to: certificate)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "x509", "-hash", "-noout", "-in", certificate.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let hash = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0 && SystemTrustRoots.isHashedCertificateName("\(hash).0"))
        try FileManager.default.moveItem(at: certificate, to: directory.appendingPathComponent("\(hash).0"))
        return try await body(directory.path)
    }
}
