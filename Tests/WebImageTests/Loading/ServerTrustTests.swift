import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Public-key pinning, the trust-evaluation hook and client certificates, against the loopback
/// TLS server with certificates made by `openssl` for each run; pins are computed by `openssl` too.
@Suite("Server trust and client certificates", .enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"),
       .timeLimit(.minutes(1)))
struct ServerTrustTests {
    /// Loads `/a.png` from `server` with `configure` applied to a loader trusting nothing extra.
    private func load(from server: LoopbackServer,
                      _ configure: (inout HTTPClientSettings) -> Void) async throws -> LoadOutcome {
        var configuration = HTTPClientSettings(idleTimeout: .seconds(5))
        configure(&configuration)
        return try await withHTTPLoader(configuration) { loader in
            await collect(loader.load(ImageLoadRequest(url: server.url("/a.png"))))
        }
    }

    @Test func theLibraryComputesThePinOpensslDoes() throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let expected = try TestCertificates.spkiPin(ofPEM: tls.certificatePEM)
        #expect(ServerTrust.pin(ofCertificatePEM: tls.certificatePEM) == expected)
        #expect(expected.count == 44)
        #expect(ServerTrust.pin(ofCertificatePEM: "not a certificate") == nil)
    }

    @Test(arguments: [false, true]) func aMatchingPinLoads(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let pin = try TestCertificates.spkiPin(ofPEM: tls.certificatePEM)
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let outcome = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                // Another pin first, and the OkHttp spelling: any one match is enough.
                $0.serverTrust = .init(pins: ["127.0.0.1": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/" + pin]])
            }
            #expect(outcome.data?.count == 10, "\(String(describing: outcome.error))")
        }
    }

    @Test(arguments: [false, true]) func aPinMismatchIsATypedPermanentErrorBeforeAnyRequest(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let other = try #require(try LoopbackTLS.selfSigned())
        let wrongPin = try TestCertificates.spkiPin(ofPEM: other.certificatePEM)
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            // The certificate itself is trusted: only the pin refuses it, after normal validation.
            let outcome = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                $0.serverTrust = .init(pins: ["*": [wrongPin]])
            }
            #expect(outcome.data == nil)
            let error = try #require(outcome.error, "\(String(describing: outcome.otherError))")
            #expect(error.code == "untrustedCertificate", "\(error)")
            #expect(!error.isTransient, "a pin mismatch must not be retried")
            #expect("\(error)".contains("pin"), "\(error)")
            #expect(server.totalRequestCount == 0, "a request went to a server that failed its pin")
        }
    }

    @Test(arguments: [false, true]) func pinsDoNotReplaceNormalValidationUnlessAsked(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let pin = try TestCertificates.spkiPin(ofPEM: tls.certificatePEM)
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            // Pinned but not trusted: normal validation still refuses the self-signed certificate.
            let refused = try await load(from: server) { $0.serverTrust = .init(pins: ["127.0.0.1": [pin]]) }
            #expect(refused.error?.code == "untrustedCertificate", "\(String(describing: refused.error))")
            // Told to replace validation, the pin alone decides: the right one loads...
            let pinned = try await load(from: server) {
                $0.serverTrust = .init(pins: ["127.0.0.1": [pin]], replacesDefaultValidation: true)
            }
            #expect(pinned.data?.count == 10, "\(String(describing: pinned.error))")
            // ...and a wrong one does not, with the pin named in the error.
            let wrong = try await load(from: server) {
                $0.serverTrust = .init(pins: ["127.0.0.1": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]],
                                       replacesDefaultValidation: true)
            }
            #expect(wrong.error?.code == "untrustedCertificate", "\(String(describing: wrong.error))")
            #expect("\(String(describing: wrong.error))".contains("pin"))
            #expect(server.requestCount(for: "/a.png") == 1)
        }
    }

    @Test(arguments: [false, true]) func theEvaluatorSeesTheHostAndChainAndCanRefuse(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let expectedDER = try #require(Self.der(ofPEM: tls.certificatePEM))
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let seen = Locked<[(String, [Data])]>([])
            let refused = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                $0.serverTrust = .init(evaluator: { host, chain in
                    seen.withLock { $0.append((host, chain)) }
                    return false
                })
            }
            #expect(refused.error?.code == "untrustedCertificate", "\(String(describing: refused.error))")
            #expect(refused.error?.isTransient == false)
            let calls = seen.withLock { $0 }
            #expect(calls.count == 1)
            #expect(calls.first?.0 == "127.0.0.1")
            #expect(calls.first?.1.first == expectedDER, "the chain does not start with the server's certificate")
            #expect(server.totalRequestCount == 0)

            let accepted = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                $0.serverTrust = .init(evaluator: { _, _ in true })
            }
            #expect(accepted.data?.count == 10, "\(String(describing: accepted.error))")
        }
    }

    @Test(arguments: [false, true]) func theEvaluatorCanReplaceValidation(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        let expectedDER = try #require(Self.der(ofPEM: tls.certificatePEM))
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let outcome = try await load(from: server) {
                $0.serverTrust = .init(evaluator: { _, chain in chain.first == expectedDER }, replacesDefaultValidation: true)
            }
            #expect(outcome.data?.count == 10, "\(String(describing: outcome.error))")
        }
    }

    @Test(arguments: [false, true]) func mutualTLSNeedsTheClientCertificate(http2: Bool) async throws {
        let identity = try TestCertificates.clientIdentity()
        let tls = try #require(try LoopbackTLS.selfSigned()).requiringClientCertificate(issuedBy: identity.caPEM)
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let without = try await load(from: server) { $0.trustedCertificatesPEM = [tls.certificatePEM] }
            #expect(without.data == nil)
            #expect(without.error != nil, "\(String(describing: without.otherError))")
            #expect(server.totalRequestCount == 0, "the server answered a client without a certificate")

            let with = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                $0.clientCertificate = .init(certificateChainPEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM)
            }
            #expect(with.data?.count == 10, "\(String(describing: with.error))")

            // A certificate from another CA is refused like none.
            let stranger = try TestCertificates.clientIdentity()
            let foreign = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                $0.clientCertificate = .init(certificateChainPEM: stranger.certificatePEM, privateKeyPEM: stranger.privateKeyPEM)
            }
            #expect(foreign.data == nil)
            #expect(server.totalRequestCount == 1)
        }
    }

    @Test(arguments: [false, true]) func theDownloaderTakesTrustAndClientCertificate(http2: Bool) async throws {
        let identity = try TestCertificates.clientIdentity()
        let tls = try #require(try LoopbackTLS.selfSigned()).requiringClientCertificate(issuedBy: identity.caPEM)
        let pin = try TestCertificates.spkiPin(ofPEM: tls.certificatePEM)
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            var configuration = ImageDownloaderConfiguration(trustedCertificatesPEM: [tls.certificatePEM])
            configuration.serverTrust = .init(pins: ["127.0.0.1": [pin]])
            configuration.clientCertificate = .init(certificateChainPEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM)
            let downloader = ImageDownloader(configuration: configuration)
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/a.png"))))
            #expect(outcome.data?.count == 10, "\(String(describing: outcome.error))")
            try await downloader.shutdown()
        }
    }

    @Test(arguments: [false, true]) func unreadableClientKeyIsATypedError(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let outcome = try await load(from: server) {
                $0.trustedCertificatesPEM = [tls.certificatePEM]
                $0.clientCertificate = .init(certificateChainPEM: "garbage", privateKeyPEM: "garbage")
            }
            #expect(outcome.error?.code == "invalidRequest", "\(String(describing: outcome.error))")
        }
    }

    /// The DER bytes of the first certificate in `pem`.
    static func der(ofPEM pem: String) -> Data? {
        let body = pem.components(separatedBy: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: body)
    }
}
