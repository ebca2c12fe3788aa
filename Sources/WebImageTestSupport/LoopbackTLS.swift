#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOSSL

/// TLS for a ``LoopbackServer``. The tests make a self-signed certificate for each run with the
/// `openssl` command, so no key or certificate lives in the repository (or expires in it).
public struct LoopbackTLS: Sendable {
    /// The server side of the handshake.
    let context: NIOSSLContext
    /// The certificate in PEM, for a client that should trust it.
    public let certificatePEM: String
    /// What ``context`` was made from, kept to derive variants (``limited(toMaximum:)``,
    /// ``requiringClientCertificate(issuedBy:)``).
    private let configuration: TLSConfiguration

    /// TLS with the certificate and private key in these PEM files.
    public init(certificateFile: String, privateKeyFile: String) throws {
        certificatePEM = String(decoding: try Data(contentsOf: URL(fileURLWithPath: certificateFile)), as: UTF8.self)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)))
        self.configuration = configuration
        context = try NIOSSLContext(configuration: configuration)
    }

    private init(certificatePEM: String, configuration: TLSConfiguration) throws {
        self.certificatePEM = certificatePEM
        self.configuration = configuration
        context = try NIOSSLContext(configuration: configuration)
    }

    /// The same certificate, with ALPN offering `h2` then `http/1.1` (an HTTP/2 server that
    /// still serves HTTP/1.1 clients).
    public func offeringHTTP2() throws -> LoopbackTLS {
        var offering = configuration
        offering.applicationProtocols = ["h2", "http/1.1"]
        return try LoopbackTLS(certificatePEM: certificatePEM, configuration: offering)
    }

    /// The same certificate, but a server that speaks TLS no newer than `version` (an outdated
    /// server, for testing a client's minimum version).
    public func limited(toMaximum version: TLSVersion) throws -> LoopbackTLS {
        var limited = configuration
        limited.minimumTLSVersion = .tlsv1
        limited.maximumTLSVersion = version
        return try LoopbackTLS(certificatePEM: certificatePEM, configuration: limited)
    }

    /// The same certificate, but a server that asks every client for a certificate and refuses
    /// the handshake without one issued by the CA in `clientCAPEM` (mutual TLS).
    public func requiringClientCertificate(issuedBy clientCAPEM: String) throws -> LoopbackTLS {
        var mutual = configuration
        mutual.certificateVerification = .noHostnameVerification
        mutual.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(clientCAPEM.utf8)))
        return try LoopbackTLS(certificatePEM: certificatePEM, configuration: mutual)
    }
}

/// Why a test certificate could not be made.
public enum LoopbackTLSError: Error {
    /// `openssl req` exited with this status.
    case opensslFailed(Int32)
}
