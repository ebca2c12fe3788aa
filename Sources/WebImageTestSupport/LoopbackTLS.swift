import Foundation
import NIOSSL

/// TLS for a ``LoopbackServer``: a self-signed certificate made for this run by the `openssl`
/// command, so no key or certificate lives in the repository (or expires in it).
public struct LoopbackTLS: Sendable {
    /// The server side of the handshake.
    let context: NIOSSLContext
    /// The certificate in PEM, for a client that should trust it.
    public let certificatePEM: String

    private static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) })

    /// Whether certificates can be made here (the `openssl` command is installed).
    public static var isAvailable: Bool { openssl != nil }

    /// A fresh self-signed certificate for `127.0.0.1` and `localhost`, or `nil` when the
    /// `openssl` command is not installed (tests then skip, saying so).
    public static func selfSigned() throws -> LoopbackTLS? {
        guard let openssl else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem"), certificate = directory.appendingPathComponent("cert.pem")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-days", "2", "-subj", "/CN=127.0.0.1",
                             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                             "-keyout", key.path, "-out", certificate.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw LoopbackTLSError.opensslFailed(process.terminationStatus)
        }
        let pem = try String(contentsOf: certificate, encoding: .utf8)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate.path).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key.path, format: .pem)))
        return LoopbackTLS(context: try NIOSSLContext(configuration: configuration), certificatePEM: pem)
    }
}

/// Why a test certificate could not be made.
public enum LoopbackTLSError: Error {
    /// `openssl req` exited with this status.
    case opensslFailed(Int32)
}
