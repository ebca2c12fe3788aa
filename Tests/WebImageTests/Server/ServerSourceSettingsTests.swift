#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// The settings of issue #31 as the configuration resolves them: `allowed-source`,
/// `allow-private-source` and its deprecated name `allow-source`, several signing keys and a key
/// file, and the lines printed on start.
@Suite("webimage serve: source and signing settings")
struct ServerSourceSettingsTests {
    private func temporaryFile(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-settings-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test func allowedSourceAndPrivateSourceFromEachLayer() async throws {
        let file = try temporaryFile(#"{"allowed-source": ["https://file.example/"], "allow-private-source": ["file.internal"]}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try await ServerConfiguration.resolve(.init(), environment: [ServerConfiguration.configFileVariable: file.path])
        #expect(fromFile.allowedSourcePrefixes == ["https://file.example/"])
        #expect(fromFile.privateSourceHosts == ["file.internal"])
        #expect(fromFile.startWarnings.isEmpty)
        #expect(fromFile.summary.contains("allowed-source: https://file.example/"))
        #expect(fromFile.summary.contains("allow-private-source: file.internal"))

        let fromEnvironment = try await ServerConfiguration.resolve(.init(), environment: [
            ServerConfiguration.configFileVariable: file.path,
            "WEBIMAGE_ALLOWED_SOURCE": "https://*.cdn.example/,s3://photos/",
            "WEBIMAGE_ALLOW_PRIVATE_SOURCE": "a.internal,b.internal:81"])
        #expect(fromEnvironment.allowedSourcePrefixes == ["https://*.cdn.example/", "s3://photos/"])
        #expect(fromEnvironment.privateSourceHosts == ["a.internal", "b.internal:81"])

        var flags = ServerConfiguration.Flags()
        flags.allowedSourcePrefixes = ["local:///"]
        flags.privateSourceHosts = ["flag.internal"]
        let fromFlags = try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_ALLOWED_SOURCE": "https://env.example/"])
        #expect(fromFlags.allowedSourcePrefixes == ["local:///"] && fromFlags.privateSourceHosts == ["flag.internal"])

        flags = .init()
        flags.allowedSourcePrefixes = ["https://cdn.example.com@evil/"]
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
    }

    @Test func theDeprecatedNamesStillWorkAndAreNamedOnStart() async throws {
        let newer = try temporaryFile(#"{"allow-private-source": ["new.internal"], "allow-source": ["old.internal"]}"#)
        let older = try temporaryFile(#"{"allow-source": ["old.internal"]}"#)
        defer {
            try? FileManager.default.removeItem(at: newer)
            try? FileManager.default.removeItem(at: older)
        }
        let fromOldKey = try await ServerConfiguration.resolve(.init(), environment: [ServerConfiguration.configFileVariable: older.path])
        #expect(fromOldKey.privateSourceHosts == ["old.internal"])
        #expect(fromOldKey.startWarnings.contains("config key allow-source is deprecated; use allow-private-source"))
        // In one layer the new name wins over the old one.
        let both = try await ServerConfiguration.resolve(.init(), environment: [ServerConfiguration.configFileVariable: newer.path])
        #expect(both.privateSourceHosts == ["new.internal"])
        // A layer's new name wins over a lower layer's old one, and an upper layer's old name over a lower layer's new one.
        let layered = try await ServerConfiguration.resolve(.init(), environment: [
            ServerConfiguration.configFileVariable: newer.path, "WEBIMAGE_ALLOW_SOURCE": "env.internal"])
        #expect(layered.privateSourceHosts == ["env.internal"])
        #expect(layered.startWarnings.contains("WEBIMAGE_ALLOW_SOURCE is deprecated; use WEBIMAGE_ALLOW_PRIVATE_SOURCE"))

        var flags = ServerConfiguration.Flags()
        flags.allowedSources = ["old.flag"]
        flags.privateSourceHosts = ["new.flag"]
        let fromFlags = try await ServerConfiguration.resolve(flags, environment: [:])
        #expect(Set(fromFlags.privateSourceHosts) == ["old.flag", "new.flag"])
        #expect(fromFlags.startWarnings.contains("--allow-source is deprecated; use --allow-private-source"))
        let current = try await ServerConfiguration.resolve({ var f = ServerConfiguration.Flags(); f.privateSourceHosts = ["x"]; return f }(),
                                                            environment: [:])
        #expect(!current.startWarnings.contains { $0.contains("deprecated") })
    }

    @Test func anOpenProxyIsWarnedAbout() async throws {
        let open = try await ServerConfiguration.resolve(.init(), environment: [:])
        let warning = try #require(open.startWarnings.first { $0.contains("open proxy") })
        #expect(warning.contains("any public URL") && warning.contains("--allowed-source") && warning.contains("--signing-key"))
        let listed = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_ALLOWED_SOURCE": "https://cdn.example/"])
        #expect(listed.startWarnings.isEmpty)
        let signed = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNING_KEY": "k"])
        #expect(signed.startWarnings.isEmpty)
    }

    @Test func signingKeysFromFlagsEnvironmentFileAndKeyFile() async throws {
        let keyFile = try temporaryFile("# rotated 2026-11\r\n\n  first-key  \r\nsecond,key\n\t# old one below, remove after December\nthird#key\n\n")
        let config = try temporaryFile(#"{"signing-key": ["file-a", "file-b"]}"#)
        let emptyKeyFile = try temporaryFile("# nothing yet\n\n")
        defer {
            for file in [keyFile, config, emptyKeyFile] { try? FileManager.default.removeItem(at: file) }
        }
        var flags = ServerConfiguration.Flags()
        flags.signingKeys = ["flag-a", "flag-b"]
        #expect(try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_SIGNING_KEY": "env"]).signingKeys == ["flag-a", "flag-b"])
        // The environment's key is one key, commas and all.
        #expect(try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNING_KEY": "a,b"]).signingKeys == ["a,b"])
        let fromFile = try await ServerConfiguration.resolve(.init(), environment: [ServerConfiguration.configFileVariable: config.path])
        #expect(fromFile.signingKeys == ["file-a", "file-b"])
        #expect(fromFile.summary.contains("signing-key: (2 keys set)"))

        flags = .init()
        flags.signingKeyFile = keyFile.path
        let fromKeyFile = try await ServerConfiguration.resolve(flags, environment: [:])
        #expect(fromKeyFile.signingKeys == ["first-key", "second,key", "third#key"])
        let fromVariable = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNING_KEY_FILE": keyFile.path,
                                                                                       "WEBIMAGE_SIGNING_KEY": "env"])
        #expect(fromVariable.signingKeys == ["env", "first-key", "second,key", "third#key"])
        for key in fromVariable.signingKeys { #expect(!fromVariable.summary.contains(key)) }

        for path in [emptyKeyFile.path, "/nonexistent/keys"] {
            flags.signingKeyFile = path
            let error = await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
            #expect(error?.message.contains(path) == true)
        }
    }

    @Test func anyOfSeveralKeysVerifies() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.signingKeys = ["new-key", "old-key"] }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let query = "url=" + server.source("/photo.jpg") + "&w=16&format=png"
        for key in ["new-key", "old-key"] {
            #expect(try await server.get(query + "&sig=" + RequestSignature(key: key).sign(query)).status == 200, "\(key)")
        }
        let forged = try await server.get(query + "&sig=" + RequestSignature(key: "other-key").sign(query))
        #expect(forged.status == 403 && forged.errorCode == "badSignature")
        #expect(RequestSignature(keys: ["new-key", "old-key"]).sign(query) == RequestSignature(key: "new-key").sign(query))
        try await server.stop()
    }
}
