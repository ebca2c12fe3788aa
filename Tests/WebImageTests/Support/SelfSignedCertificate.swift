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
        return try LoopbackTLS(certificateFile: certificate.path, privateKeyFile: key.path)
    }
}
