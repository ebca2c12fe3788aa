import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// TLS against a real HTTPS server on 127.0.0.1 whose certificate is self-signed for this run:
/// refused by default with a permanent typed error, accepted only when the loader is told to.
@Suite("HTTPS with a self-signed certificate", .enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
struct HTTPSLoaderTests {
    /// A server with a fresh self-signed certificate; with `http2`, it offers h2 by ALPN (which the loader takes).
    private func withTLSServer<T: Sendable>(http2: Bool, _ body: (LoopbackServer) async throws -> T) async throws -> T {
        try await withServer(tls: try #require(try LoopbackTLS.selfSigned()), http2: http2, body)
    }

    @Test(arguments: [false, true]) func selfSignedCertificateIsRefusedByDefault(http2: Bool) async throws {
        try await withTLSServer(http2: http2) { server in
            server.route("/secure.jpg", LoopbackResponse(body: .bytes(try sampleJPEG())))
            #expect(server.url("/secure.jpg").scheme == "https")
            try await withHTTPLoader { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/secure.jpg"))))
                guard case .untrustedCertificate = outcome.error else {
                    Issue.record("expected untrustedCertificate, got \(String(describing: outcome.error)) \(outcome.otherError ?? "")")
                    return
                }
                #expect(outcome.error?.isTransient == false)
                #expect(outcome.data == nil)
            }
            // The handshake failed before any HTTP request was sent.
            #expect(server.requestCount(for: "/secure.jpg") == 0)
        }
    }

    @Test(arguments: [false, true]) func allowsInvalidCertificatesLetsTheLoadThrough(http2: Bool) async throws {
        try await withTLSServer(http2: http2) { server in
            let jpeg = try sampleJPEG()
            server.route("/secure.jpg", LoopbackResponse(body: .bytes(jpeg)))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), allowsInvalidCertificates: true)) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/secure.jpg"))))
                #expect(outcome.error == nil, "\(outcome.otherError ?? "")")
                #expect(outcome.data == jpeg)
                #expect(outcome.completedResponse?.statusCode == 200)
            }
            #expect(server.requestCount(for: "/secure.jpg") == 1)
        }
    }

    @Test(arguments: [false, true]) func theManagerListsAnUntrustedURLAsFailed(http2: Bool) async throws {
        try await withTLSServer(http2: http2) { server in
            server.route("/secure.jpg", LoopbackResponse(body: .bytes(try sampleJPEG())))
            let fixture = try ManagerFixture()
            let url = server.url("/secure.jpg")
            await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(with: url) }
            #expect(fixture.manager.isFailedURL(url))
            // Known bad: the next load fails at once, without another handshake.
            await #expect(throws: WebImageError.blockedFailedURL) { try await fixture.manager.loadImage(with: url) }
        }
    }
}
