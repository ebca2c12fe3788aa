import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `webimage load --pin-sha256` and `--client-cert`/`--client-key` against the loopback TLS server.
@Suite("webimage trust options", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"),
       .serialized, .timeLimit(.minutes(2)))
struct CLITrustOptionsTests {
    @Test func pinsAndAClientCertificateReachAMutualTLSServer() async throws {
        let identity = try TestCertificates.clientIdentity()
        let tls = try #require(try LoopbackTLS.selfSigned()).requiringClientCertificate(issuedBy: identity.caPEM)
        let pin = try TestCertificates.spkiPin(ofPEM: tls.certificatePEM)
        try await withServer(tls: tls) { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let url = server.url("/a.jpg").absoluteString
            let directory = try TemporaryDirectory()
            func write(_ text: String, _ name: String) throws -> String {
                let file = directory.url.appendingPathComponent(name)
                try Data(text.utf8).write(to: file)
                return file.path
            }
            let ca = try write(tls.certificatePEM, "server.pem")
            let certificate = try write(identity.certificatePEM, "client.pem"), key = try write(identity.privateKeyPEM, "client.key")
            let client = ["--client-cert", certificate, "--client-key", key]

            let pinned = try await runCLI(["load", url, "--cache-dir", directory.url.appendingPathComponent("c1").path,
                                           "--ca-file", ca, "--pin-sha256", "sha256/" + pin] + client)
            #expect(pinned.status == 0, "\(pinned.stdout) \(pinned.stderr)")

            let wrongPin = String(repeating: "A", count: 43) + "="
            let mismatched = try await runCLI(["load", url, "--cache-dir", directory.url.appendingPathComponent("c2").path,
                                               "--ca-file", ca, "--pin-sha256", wrongPin] + client)
            #expect(mismatched.status == 1)
            #expect(mismatched.stdout.contains("untrustedCertificate"), "\(mismatched.stdout)")

            let anonymous = try await runCLI(["load", url, "--cache-dir", directory.url.appendingPathComponent("c3").path, "--ca-file", ca])
            #expect(anonymous.status == 1, "a server requiring a client certificate served one without")
            #expect(server.requestCount(for: "/a.jpg") == 1)
        }
    }

    @Test func badTrustOptionsAreRefusedWithAMessage() async throws {
        let directory = try TemporaryDirectory()
        let runs: [([String], String)] = [
            (["--pin-sha256", "not base64!"], "--pin-sha256"),
            (["--pin-sha256", "AAAA"], "--pin-sha256"),
            (["--client-cert", directory.url.appendingPathComponent("missing.pem").path], "--client-key"),
            (["--client-cert", "/dev/null", "--client-key", "/dev/null"], "--client-cert"),
        ]
        for (options, named) in runs {
            let run = try await runCLI(["load", "https://127.0.0.1:9/a.png", "--cache-dir", directory.url.path] + options)
            #expect(run.status != 0 && run.status < 128, "\(options): \(run.status)")
            #expect(run.stderr.contains(named), "\(options): \(run.stderr)")
        }
    }
}
