import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// Transport security defaults: TLS 1.2 at least; basic-auth credentials only over https.
@Suite("Transport security defaults", .timeLimit(.minutes(1)))
struct TransportSecurityTests {
    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
    func aServerLimitedToTLS11IsRefused() async throws {
        let tls = try #require(try LoopbackTLS.selfSigned()).limited(toMaximum: .tlsv11)
        try await withServer(tls: tls) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), allowsInvalidCertificates: true)) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a.png"))))
                #expect(outcome.data == nil, "TLS 1.1 was accepted")
                #expect(outcome.error?.code == "connectionFailed", "\(String(describing: outcome.error))")
            }
            #expect(server.totalRequestCount == 0)
        }
    }

    @Test func basicAuthIsNotSentOverPlainHTTP() async throws {
        try await withServer { server in
            server.route("/private", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .init(
                credentials: ["127.0.0.1": HTTPCredential(user: "alice", password: "secret")]))
            _ = await collect(downloader.load(ImageLoadRequest(url: server.url("/private"))))
            let sent = try #require(server.requests.first)
            #expect(sent.headers["authorization"] == nil, "credentials went out in clear text")
        }
    }
}

/// Extra trust roots, and credentials over https.
@Suite("Trusted certificates", .enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"),
       .timeLimit(.minutes(1)))
struct TrustedCertificateTests {
    @Test(arguments: [false, true]) func aSelfSignedCertificateGivenAsPEMIsTrusted(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), trustedCertificatesPEM: [tls.certificatePEM])) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a.png"))))
                #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            }
            // Another certificate is still refused.
            let stranger = try #require(try LoopbackTLS.selfSigned())
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), trustedCertificatesPEM: [stranger.certificatePEM])) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a.png"))))
                #expect(outcome.error?.code == "untrustedCertificate", "\(String(describing: outcome.error))")
            }
        }
    }

    @Test(arguments: [false, true]) func theDownloaderTrustsItsPEMAndSendsCredentialsOverHTTPS(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/private", .image(testBytes(10), contentType: "image/png"))
            let downloader = ImageDownloader(configuration: .init(
                credentials: ["127.0.0.1": HTTPCredential(user: "alice", password: "secret")],
                trustedCertificatesPEM: [tls.certificatePEM]))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: server.url("/private"))))
            #expect(outcome.data?.count == 10, "\(String(describing: outcome.error))")
            #expect(server.requests.first?.headers["authorization"] == "Basic YWxpY2U6c2VjcmV0")
            try await downloader.shutdown()
        }
    }

    @Test(arguments: [false, true]) func garbagePEMFailsHTTPSLoadsWithATypedError(http2: Bool) async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls, http2: http2) { server in
            server.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            try await withHTTPLoader(.init(idleTimeout: .seconds(5), trustedCertificatesPEM: ["not a certificate"])) { loader in
                let outcome = await collect(loader.load(ImageLoadRequest(url: server.url("/a.png"))))
                #expect(outcome.error != nil && outcome.data == nil)
            }
            #expect(server.totalRequestCount == 0)
        }
    }
}
