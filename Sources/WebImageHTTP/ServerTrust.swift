#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOSSL
import NIOTLS
import WebImageSupport

/// Decides whether a server's certificate chain is trusted: `host` is the URL's host
/// (lowercased), `certificateChain` the certificates in DER, leaf first. Return `false` to
/// refuse: the load fails as an untrusted certificate before a request is sent. Runs on an event
/// loop for every new connection: must be quick and must not block.
public typealias ServerTrustEvaluator = @Sendable (_ host: String, _ certificateChain: [Data]) -> Bool

/// What an https server must show besides (or instead of) the usual certificate validation:
/// public-key pins and a trust hook. A connection that fails them is closed before a request
/// is written, with an untrusted-certificate error (permanent: not retried; through WebImage,
/// `WebImageError.untrustedCertificate`).
public struct ServerTrust: Sendable {
    /// Base64 SHA-256 hashes of certificates' SubjectPublicKeyInfo, by lowercased host, as
    /// HPKP's `pin-sha256` and OkHttp's `sha256/…` (the prefix is optional); the key `"*"`
    /// stands for every host without an entry of its own. A pinned host's chain must contain a
    /// certificate (leaf, intermediate or root) whose key hashes to one of its pins.
    public var pins: [String: Set<String>]
    /// Sees every server's chain after the pins passed; `false` refuses it.
    public var evaluator: ServerTrustEvaluator?
    /// Let the pins and the evaluator decide alone: no validation against trust roots and no
    /// host-name check (a pinned self-signed server). Off by default: they are checked after
    /// the usual validation passed.
    public var replacesDefaultValidation: Bool

    /// Creates a trust setting.
    public init(pins: [String: Set<String>] = [:], evaluator: ServerTrustEvaluator? = nil,
                 replacesDefaultValidation: Bool = false) {
        self.pins = pins
        self.evaluator = evaluator
        self.replacesDefaultValidation = replacesDefaultValidation
    }

    /// The pins of `host`: its own, else the wildcard's; `nil` when it is not pinned.
    func pins(for host: String) -> Set<String>? {
        let pins = self.pins[host] ?? self.pins["*"]
        return pins.map { Set($0.map(Self.normalizedPin)) }
    }

    /// A pin as compared: without the `sha256/` prefix and surrounding spaces.
    static func normalizedPin(_ pin: String) -> String {
        let trimmed = pin.trimmingSpacesAndTabs
        return trimmed.hasPrefix("sha256/") ? String(trimmed.dropFirst("sha256/".count)) : trimmed
    }

    /// The base64 SHA-256 of `certificate`'s SubjectPublicKeyInfo; `nil` when it has no readable key.
    package static func spkiPin(of certificate: NIOSSLCertificate) -> String? {
        guard let spki = try? certificate.extractPublicKey().toSPKIBytes() else { return nil }
        var hash = SHA256()
        hash.update(spki)
        return Data(hash.finalize()).base64EncodedString()
    }

    /// Why `chain` (leaf first) is refused for `host`, or `nil` when it passes.
    func refusal(host: String, chain: [NIOSSLCertificate]) -> String? {
        if let pins = pins(for: host) {
            let keys = chain.compactMap(Self.spkiPin)
            guard keys.contains(where: pins.contains) else {
                return "no certificate of \(host)'s chain matches its pinned public keys (it has \(keys.map { "sha256/" + $0 }))"
            }
        }
        if let evaluator {
            let der = chain.compactMap { try? Data($0.toDERBytes()) }
            guard evaluator(host, der) else { return "the trust evaluator refused \(host)'s certificate chain" }
        }
        return nil
    }
}

extension ServerTrust {
    /// The client-side TLS handlers of one connection to `host`: NIOSSL's, and the one that holds
    /// the handshake until the chain passed ``refusal(host:chain:)``. Added in this order.
    func makeHandlers(context: NIOSSLContext, serverHostname: String?, host: String) throws -> [any ChannelHandler] {
        let verdict = ServerTrustVerdict()
        let tls: NIOSSLClientHandler
        if replacesDefaultValidation {
            // NIOSSL's custom verification replaces BoringSSL's: it sees the chain as presented.
            tls = try NIOSSLClientHandler(context: context, serverHostname: serverHostname,
                                          customVerificationCallback: { [self] chain, promise in
                verdict.chain = chain
                verdict.refusal = refusal(host: host, chain: chain)
                promise.succeed(verdict.refusal == nil ? .certificateVerified : .failed)
            })
            verdict.decided = true
        } else {
            // Called through the protocol: see ChainRecordingClientHandler.
            let maker: any ChainRecordingClientHandlerMaking.Type = ChainRecordingClientHandler.self
            tls = try maker.make(context: context, serverHostname: serverHostname, verdict: verdict)
        }
        return [tls, ServerTrustHandler(trust: self, host: host, verdict: verdict)]
    }
}

/// What one connection's verification saw; touched on its event loop only.
final class ServerTrustVerdict {
    /// The chain as presented, leaf first (custom verification), or as BoringSSL validated it,
    /// root first (the old-style callback, after which ``ServerTrustHandler`` reverses it).
    var chain: [NIOSSLCertificate] = []
    /// Why the custom verification refused it.
    var refusal: String?
    /// The custom verification decided already: nothing is left to check after the handshake.
    var decided = false
}

/// Holds the handshake's completion until the server's chain passed the pins and the evaluator;
/// a refused chain fails the connection with ``HTTPLoadError/untrustedCertificate(_:)``.
final class ServerTrustHandler: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    private let trust: ServerTrust
    private let host: String
    private let verdict: ServerTrustVerdict

    init(trust: ServerTrust, host: String, verdict: ServerTrustVerdict) {
        self.trust = trust
        self.host = host
        self.verdict = verdict
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event, !verdict.decided {
            // BoringSSL's verify callback saw the chain root first; the pins and the hook want the leaf first.
            if let refusal = trust.refusal(host: host, chain: verdict.chain.reversed()) {
                context.fireErrorCaught(HTTPLoadError.untrustedCertificate(refusal))
                context.close(promise: nil)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The custom verification's own reason beats BoringSSL's "certificate verify failed".
        if let refusal = verdict.refusal, error is NIOSSLError {
            context.fireErrorCaught(HTTPLoadError.untrustedCertificate(refusal))
        } else {
            context.fireErrorCaught(error)
        }
    }
}

/// Makes a client handler that lets BoringSSL validate as usual and records the chain it built.
///
/// NIOSSL offers that only through its old-style per-certificate callback, deprecated in favour of
/// the custom verification that replaces validation. The deprecated call sits in a deprecated
/// witness of a protocol requirement, so it warns nowhere; the callback hands back BoringSSL's own
/// result unchanged, so validation is exactly what it would be without it.
enum ChainRecordingClientHandler: ChainRecordingClientHandlerMaking {
    @available(*, deprecated, message: "uses NIOSSL's old-style verification callback on purpose")
    static func make(context: NIOSSLContext, serverHostname: String?, verdict: ServerTrustVerdict) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: serverHostname, verificationCallback: { result, certificate in
            verdict.chain.append(certificate)
            return result
        })
    }
}

/// The requirement ``ChainRecordingClientHandler`` is called through.
protocol ChainRecordingClientHandlerMaking {
    static func make(context: NIOSSLContext, serverHostname: String?, verdict: ServerTrustVerdict) throws -> NIOSSLClientHandler
}

extension ServerTrust {
    /// The base64 SHA-256 of the SubjectPublicKeyInfo of the certificate in `pem` (its first
    /// certificate): the pin to put in ``pins``; `nil` when `pem` holds no readable certificate.
    public static func pin(ofCertificatePEM pem: String) -> String? {
        guard let certificate = try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)).first else { return nil }
        return spkiPin(of: certificate)
    }
}
