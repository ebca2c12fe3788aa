#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// A signature names its endpoint: one made for `/image` does not open `/info`, nor the reverse.
/// Query-only signatures (made before) verify only under `--signature-migration`.
@Suite("webimage serve: signatures bound to their endpoint")
struct ServerSignatureEndpointTests {
    static let key = "signature-endpoint-test-key-0123456789"

    private func start(migration: Bool) async throws -> ServerHarness {
        let server = try await ServerHarness.start { configuration, _ in
            configuration.signingKeys = [Self.key]
            configuration.signatureMigration = migration
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        return server
    }

    @Test func aSignatureForOneEndpointDoesNotOpenTheOther() async throws {
        let server = try await start(migration: false)
        let signer = RequestSignature(key: Self.key)
        let query = "url=" + server.source("/photo.jpg")
        func send(_ path: String, _ sig: String) async throws -> HTTPReply {
            try await ServerTestClient.send(port: server.port, "\(path)?\(query)&sig=\(sig)")
        }
        #expect(try await send("/image", signer.sign(endpoint: .image, query: query)).status == 200)
        #expect(try await send("/info", signer.sign(endpoint: .info, query: query)).status == 200)
        let imageForInfo = try await send("/info", signer.sign(endpoint: .image, query: query))
        #expect(imageForInfo.status == 403 && imageForInfo.errorCode == "badSignature")
        let infoForImage = try await send("/image", signer.sign(endpoint: .info, query: query))
        #expect(infoForImage.status == 403 && infoForImage.errorCode == "badSignature")
        // A signature over the query alone, as made before: refused without the migration setting.
        let queryOnly = try await send("/info", signer.sign(query))
        #expect(queryOnly.status == 403 && queryOnly.errorCode == "badSignature")
        #expect(RequestSignature.message(endpoint: .image, query: query + "&sig=00") == "/image?" + query)
        try await server.stop()
    }

    @Test func queryOnlySignaturesVerifyDuringMigration() async throws {
        let server = try await start(migration: true)
        let signer = RequestSignature(key: Self.key)
        let query = "url=" + server.source("/photo.jpg")
        for path in ["/image", "/info"] {
            #expect(try await ServerTestClient.send(port: server.port, "\(path)?\(query)&sig=\(signer.sign(query))").status == 200, "\(path)")
        }
        #expect(try await ServerTestClient.send(port: server.port, "/image?\(query)&sig=\(signer.sign(endpoint: .image, query: query))").status == 200)
        try await server.stop()
    }

    @Test func migrationIsOnByDefaultInThisRelease() async throws {
        #expect(ServerConfiguration().signatureMigration)
        let defaults = try await ServerConfiguration.resolve(.init(), environment: [:])
        #expect(defaults.signatureMigration)
        let off = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNATURE_MIGRATION": "false"])
        #expect(!off.signatureMigration)
    }
}
