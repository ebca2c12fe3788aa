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
    private func temporaryFile(_ text: String, permissions: Int = 0o600) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-settings-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file.path)
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
        let signed = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNING_KEY": String(repeating: "k", count: 32),
                                                                                 "WEBIMAGE_SIGNATURE_MIGRATION": "false"])
        #expect(signed.startWarnings.isEmpty)
    }

    @Test func weakSigningSettingsAndAnEnvironmentProxyAreWarnedAbout() async throws {
        let key = String(repeating: "k", count: 32)
        // Query-only signatures are accepted by default in this release, and said so.
        let migrating = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNING_KEY": key])
        #expect(migrating.signatureMigration)
        #expect(migrating.startWarnings.contains { $0.contains("--signature-migration") })
        #expect(migrating.summary.contains("signature-migration: true"))
        var flags = ServerConfiguration.Flags()
        flags.signatureMigration = false
        #expect(try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_SIGNING_KEY": key]).startWarnings.isEmpty)
        let short = try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_SIGNING_KEY": "short"])
        #expect(short.startWarnings.contains { $0.contains("shorter than 32 bytes") })
        // A proxy from the environment resolves names where the guard cannot see them.
        let proxied = try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_SIGNING_KEY": key,
                                                                                "https_proxy": "http://proxy.internal:3128"])
        let warning = try #require(proxied.startWarnings.first { $0.contains("proxy") })
        #expect(warning.contains("https_proxy") && warning.contains("rebinding"))
    }

    @Test func aSigningKeyFileMustBePrivateAndItsKeysLong() async throws {
        let key = String(repeating: "a", count: 32)
        for mode in [0o644, 0o604, 0o620, 0o666] {
            let open = try temporaryFile(key + "\n", permissions: mode)
            defer { try? FileManager.default.removeItem(at: open) }
            var flags = ServerConfiguration.Flags()
            flags.signingKeyFile = open.path
            let error = await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
            #expect(error?.message.contains("chmod 600") == true, "\(String(mode, radix: 8))")
        }
        for mode in [0o600, 0o640, 0o400] {
            let closed = try temporaryFile(key + "\n", permissions: mode)
            defer { try? FileManager.default.removeItem(at: closed) }
            var flags = ServerConfiguration.Flags()
            flags.signingKeyFile = closed.path
            #expect(try await ServerConfiguration.resolve(flags, environment: [:]).signingKeys == [key], "\(String(mode, radix: 8))")
        }
        let short = try temporaryFile(key + "\nshort-key\n")
        defer { try? FileManager.default.removeItem(at: short) }
        var flags = ServerConfiguration.Flags()
        flags.signingKeyFile = short.path
        let error = await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
        #expect(error?.message.contains("key 2 is shorter than 32 bytes") == true)
        #expect(error?.message.contains("short-key") == false)
    }

    @Test func signingKeysFromFlagsEnvironmentFileAndKeyFile() async throws {
        let (first, second, third) = ("first-key-of-thirty-two-bytes-00", "second,key-of-thirty-two-bytes-0", "third#key-of-thirty-two-bytes-00")
        let keyFile = try temporaryFile("# rotated 2026-11\r\n\n  \(first)  \r\n\(second)\n\t# old one below, remove after December\n\(third)\n\n")
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
        #expect(fromKeyFile.signingKeys == [first, second, third])
        let fromVariable = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_SIGNING_KEY_FILE": keyFile.path,
                                                                                       "WEBIMAGE_SIGNING_KEY": "env"])
        #expect(fromVariable.signingKeys == ["env", first, second, third])
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
