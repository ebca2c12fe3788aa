import Foundation
import WebImageTestSupport

extension LoopbackTLS {
    private static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) })

    /// Whether certificates can be made here (the `openssl` command is installed).
    static var isAvailable: Bool { openssl != nil }

    /// A fresh self-signed certificate for `127.0.0.1` and `localhost`, or `nil` when the
    /// `openssl` command is not installed (tests then skip, saying so).
    static func selfSigned() throws -> LoopbackTLS? {
        guard let openssl else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem"), certificate = directory.appendingPathComponent("cert.pem")
        let status = try ChildProcess.runBlocking(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", key.path, "-out", certificate.path]).status
        guard status == 0 else { throw LoopbackTLSError.opensslFailed(status) }
        return try LoopbackTLS(certificateFile: certificate.path, privateKeyFile: key.path)
    }
}

/// Certificates for trust and mutual-TLS tests, made with the `openssl` command for each run.
enum TestCertificates {
    /// Runs `script` with `/bin/sh` in `directory` (with `$OPENSSL` set) and returns its standard output.
    static func shell(_ script: String, in directory: URL) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["OPENSSL"] = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) ?? "openssl"
        let result = try ChildProcess.runBlocking("/bin/sh", ["-c", "set -e; " + script], environment: environment, directory: directory)
        guard result.status == 0 else { throw LoopbackTLSError.opensslFailed(result.status) }
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// The base64 SHA-256 of the SubjectPublicKeyInfo of the certificate in `pem`, as openssl
    /// computes it (the recipe HPKP and OkHttp document): an oracle independent of the library.
    static func spkiPin(ofPEM pem: String) throws -> String {
        let directory = try TemporaryDirectory()
        try Data(pem.utf8).write(to: directory.url.appendingPathComponent("cert.pem"))
        return try shell("$OPENSSL x509 -in cert.pem -pubkey -noout | $OPENSSL pkey -pubin -outform der"
                         + " | $OPENSSL dgst -sha256 -binary | base64", in: directory.url)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A fresh CA and a client certificate it issued, all PEM.
    struct ClientIdentity {
        var caPEM: String
        var certificatePEM: String
        var privateKeyPEM: String
    }

    /// Makes a test CA and a client certificate (`CN=client`) signed by it.
    static func clientIdentity() throws -> ClientIdentity {
        let directory = try TemporaryDirectory()
        let curve = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        _ = try shell("""
            $OPENSSL req -x509 \(curve) -days 2 -subj /CN=webimage-test-ca -keyout ca.key -out ca.pem
            $OPENSSL req \(curve) -subj /CN=client -keyout client.key -out client.csr
            $OPENSSL x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem
            """, in: directory.url)
        func read(_ name: String) throws -> String {
            String(decoding: try Data(contentsOf: directory.url.appendingPathComponent(name)), as: UTF8.self)
        }
        return ClientIdentity(caPEM: try read("ca.pem"), certificatePEM: try read("client.pem"), privateKeyPEM: try read("client.key"))
    }
}
