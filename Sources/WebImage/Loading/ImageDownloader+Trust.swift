#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

extension ImageDownloader {
    /// Decides whether a server's certificate chain is trusted: `host` is the URL's host
    /// (lowercased), `certificateChain` the certificates in DER, leaf first. Return `false` to
    /// refuse: the load fails with ``WebImageError/untrustedCertificate(_:)`` before a request is
    /// sent. Runs on an event loop for every new connection: must be quick and must not block.
    public typealias ServerTrustEvaluator = @Sendable (_ host: String, _ certificateChain: [Data]) -> Bool

    /// What an https server must show besides (or instead of) the usual certificate validation:
    /// public-key pins and a trust hook. A connection that fails them is closed before a request
    /// is written, with ``WebImageError/untrustedCertificate(_:)`` (permanent: not retried).
    public struct ServerTrust: Sendable {
        /// Base64 SHA-256 hashes of certificates' SubjectPublicKeyInfo, by lowercased host, as
        /// HPKP's `pin-sha256` and OkHttp's `sha256/…` (the prefix is optional); the key `"*"`
        /// stands for every host without an entry of its own. A pinned host's chain must contain a
        /// certificate (leaf, intermediate or root) whose key hashes to one of its pins.
        public var pins: [String: Set<String>]
        /// Sees every server's chain after the pins passed; `false` refuses it.
        public var evaluator: ImageDownloader.ServerTrustEvaluator?
        /// Let the pins and the evaluator decide alone: no validation against trust roots and no
        /// host-name check (a pinned self-signed server). Off by default: they are checked after
        /// the usual validation passed.
        public var replacesDefaultValidation: Bool

        /// Creates a trust setting.
        public init(pins: [String: Set<String>] = [:], evaluator: ImageDownloader.ServerTrustEvaluator? = nil,
                    replacesDefaultValidation: Bool = false) {
            self.pins = pins
            self.evaluator = evaluator
            self.replacesDefaultValidation = replacesDefaultValidation
        }

        /// The base64 SHA-256 of the SubjectPublicKeyInfo of the certificate in `pem` (its first
        /// certificate): the pin to put in ``pins``; `nil` when `pem` holds no readable certificate.
        public static func pin(ofCertificatePEM pem: String) -> String? {
            ServerTrustPin.pin(ofCertificatePEM: pem)
        }

        /// The HTTP stack's form of this setting.
        var http: WebImageHTTP.ServerTrust {
            let evaluator = evaluator.map { evaluate in
                { @Sendable (host: String, chain: [[UInt8]]) -> Bool in evaluate(host, chain.map { Data($0) }) }
            }
            return WebImageHTTP.ServerTrust(pins: pins, evaluator: evaluator, replacesDefaultValidation: replacesDefaultValidation)
        }
    }

    /// A client certificate for mutual TLS, sent to every https server that asks for one.
    public struct ClientCertificate: Sendable {
        /// The certificate, and any intermediates after it, in PEM.
        public var certificateChainPEM: String
        /// Its private key, in PEM (unencrypted). Unreadable PEM fails https loads with
        /// ``WebImageError/invalidRequest(_:)``.
        public var privateKeyPEM: String

        /// Creates a client certificate from PEM text.
        public init(certificateChainPEM: String, privateKeyPEM: String) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
        }

        /// The HTTP stack's form of this setting.
        var http: WebImageHTTP.ClientCertificate {
            WebImageHTTP.ClientCertificate(certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM)
        }
    }
}
