import Foundation
import Testing
import WebImageServer
import WebImageTestSupport

/// Issue #31's flags on the real `webimage serve` process, read as a parser would: the lines on
/// stderr at start, the settings on stdout, the JSON error of a refused source, a failed start.
@Suite("webimage serve: source flags on the command line", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
struct ServerSourcesCLITests {
    /// Starts `webimage serve` with `arguments`; returns the process, its stdout up to the
    /// listening line, and the port.
    private func serve(_ arguments: [String], environment: [String: String] = [:]) async throws -> (WatchedProcess, String, Int) {
        let binary = try #require(CrashSafetyTests.binary)
        let child = try await WatchedProcess.start(binary, ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments,
                                                   environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a },
                                                   watching: .stdout) { $0.contains("listening on") && $0.hasSuffix("\n") ? $0 : nil }
        let line = try #require(child.readiness.split(separator: "\n").first { $0.contains("listening on http://127.0.0.1:") })
        return (child, child.readiness, try #require(Int(line.split(separator: ":").last ?? "")))
    }

    @Test func theOldNamesWorkWithADeprecationLineAndAnOpenProxyIsWarnedAbout() async throws {
        let (child, stdout, _) = try await serve(["--allow-source", "images.example:8080"])
        // stderr is written before the settings are printed: all there once the port is.
        let stderr = child.log
        #expect(stderr.contains("webimage serve: --allow-source is deprecated; use --allow-private-source\n"))
        #expect(stderr.contains("webimage serve: this instance fetches any public URL for anyone who asks (an open proxy); "
            + "restrict it with --allowed-source PREFIX or --signing-key KEY\n"))
        #expect(!stdout.contains("deprecated") && !stdout.contains("open proxy"))
        #expect(stdout.contains("allow-source: images.example:8080"))
        await child.stop()

        let (fromEnvironment, _, _) = try await serve([], environment: ["WEBIMAGE_ALLOW_SOURCE": "images.example", "WEBIMAGE_SIGNING_KEY": "k"])
        #expect(fromEnvironment.log.contains("webimage serve: WEBIMAGE_ALLOW_SOURCE is deprecated; use WEBIMAGE_ALLOW_PRIVATE_SOURCE\n"))
        #expect(!fromEnvironment.log.contains("open proxy"))
        await fromEnvironment.stop()
    }

    @Test func aRestrictedInstanceRefusesOffListSourcesAndPrintsNoKey() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/public/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        origin.route("/private/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-keys-\(UUID().uuidString)")
        try Data("# keys\nfile-key-one-of-thirty-two-bytes\nfile-key-two-of-thirty-two-bytes\n".utf8).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let base = "http://127.0.0.1:\(origin.port)"
        let (child, stdout, port) = try await serve([
            "--allowed-source", base + "/public/", "--allowed-source", "https://*.cdn.example/",
            "--allow-private-source", "127.0.0.1:\(origin.port)", "--signing-key", "flag-key-of-thirty-two-bytes-long", "--no-signature-migration", "--signing-key-file", keyFile.path,
            "--preset", "thumb=w=24&fit=cover", "--preset", "png=format=png"])
        #expect(!child.log.contains("webimage serve:"), "\(child.log)")
        #expect(stdout.contains("allowed-source: \(base)/public/, https://*.cdn.example/\n"))
        #expect(stdout.contains("allow-private-source: 127.0.0.1:\(origin.port)\n"))
        #expect(stdout.contains("signing-key: (3 keys set)\n"))
        #expect(stdout.contains("presets: png, thumb\n"))
        for key in ["flag-key-of-thirty-two-bytes-long", "file-key-one-of-thirty-two-bytes", "file-key-two-of-thirty-two-bytes"] { #expect(!stdout.contains(key)) }

        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let good = "url=" + encoded(base + "/public/photo.jpg") + "&preset=thumb,png"
        let reply = try await ServerTestClient.image(port: port, good + "&sig=" + RequestSignature(key: "file-key-two-of-thirty-two-bytes").sign(endpoint: .image, query: good))
        #expect(reply.status == 200)
        #expect(try ServerTestImages.decode(reply.body).width == 24)
        let off = "url=" + encoded(base + "/private/photo.jpg")
        let refused = try await ServerTestClient.image(port: port, off + "&sig=" + RequestSignature(key: "flag-key-of-thirty-two-bytes-long").sign(endpoint: .image, query: off))
        #expect(refused.status == 403)
        #expect(refused.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(refused.errorCode == "sourceNotAllowed")
        #expect(origin.requestCount(for: "/private/photo.jpg") == 0)
        await child.stop()
        #expect(!child.log.contains("key-"))
        try await origin.shutdown()
    }

    @Test func aBadPresetOrPrefixFailsTheStartWithAClearMessage() async throws {
        let badPreset = try await runCLI(["serve", "--port", "0", "--preset", "thumb=w=300&q=500"])
        #expect(badPreset.status != 0)
        #expect(badPreset.stderr.contains("bad preset 'thumb': 'q' must be an integer in 1...100"), "\(badPreset.stderr)")
        #expect(!badPreset.stdout.contains("listening"))
        let badPrefix = try await runCLI(["serve", "--port", "0", "--allowed-source", "cdn.example.com"])
        #expect(badPrefix.status != 0)
        #expect(badPrefix.stderr.contains("bad --allowed-source 'cdn.example.com'"), "\(badPrefix.stderr)")
        let presetsOnly = try await runCLI(["serve", "--port", "0", "--presets-only"])
        #expect(presetsOnly.status != 0)
        #expect(presetsOnly.stderr.contains("presets-only needs at least one preset"), "\(presetsOnly.stderr)")
    }
}
