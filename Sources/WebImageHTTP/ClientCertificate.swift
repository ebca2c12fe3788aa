import NIOSSL

/// A client certificate for mutual TLS: the certificate chain (leaf first) and its private key,
/// both in PEM. Sent to every https server that asks for one.
public struct ClientCertificate: Sendable {
    /// The certificate, and any intermediates after it, in PEM.
    public var certificateChainPEM: String
    /// The certificate's private key, in PEM (unencrypted). Unreadable PEM fails https loads as
    /// an invalid request.
    public var privateKeyPEM: String

    /// Creates a client certificate from PEM text.
    public init(certificateChainPEM: String, privateKeyPEM: String) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// Puts the certificate and key into `configuration`; unreadable PEM is an
    /// ``HTTPLoadError/invalidRequest(_:)`` (it fails https loads, not the process).
    func apply(to configuration: inout TLSConfiguration) throws {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
            key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        } catch {
            throw HTTPLoadError.invalidRequest("unreadable client certificate or key: \(error)")
        }
        guard !chain.isEmpty else { throw HTTPLoadError.invalidRequest("no certificate in the client certificate PEM") }
        configuration.certificateChain = chain.map { .certificate($0) }
        configuration.privateKey = .privateKey(key)
    }
}
