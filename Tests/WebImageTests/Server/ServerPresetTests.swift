#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--preset NAME=QUERY`, `preset=A,B` and `--presets-only`: the merge order, the checks at start,
/// and over real HTTP the output key made from the effective options.
@Suite("webimage serve: presets")
struct ServerPresetTests {
    private let url = "url=" + "https://images.example/a.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!

    @Test func presetsApplyLeftToRightThenTheRequestOverrides() throws {
        let presets = try ImagePresets(["thumb": "w=300&h=300&fit=cover&q=75", "small": "w=64", "png": "format=png"])
        let thumb = try ImageParameters(query: url + "&preset=thumb", presets: presets)
        #expect(thumb.width == 300 && thumb.height == 300 && thumb.fit == .cover && thumb.quality == 75 && thumb.format == .auto)
        let both = try ImageParameters(query: url + "&preset=thumb,small,png", presets: presets)
        #expect(both.width == 64 && both.height == 300 && both.fit == .cover && both.format == .png)
        let reversed = try ImageParameters(query: url + "&preset=small,thumb", presets: presets)
        #expect(reversed.width == 300)
        let overridden = try ImageParameters(query: url + "&q=90&preset=thumb&w=10", presets: presets)
        #expect(overridden.width == 10 && overridden.quality == 90 && overridden.height == 300)
        // The same effective options as spelled out: the same output key.
        let spelled = try ImageParameters(query: url + "&w=300&h=300&fit=cover&q=75", presets: presets)
        #expect(thumb == spelled)
        for query in ["&preset=nope", "&preset=thumb,nope", "&preset=", "&preset=thumb,", "&preset=thumb&preset=small", "&preset=THUMB"] {
            let error = #expect(throws: ServiceError.self, "\(query)") { try ImageParameters(query: url + query, presets: presets) }
            #expect(error?.status == 400 && error?.code == "badParameter", "\(query)")
        }
        // Without presets, `preset` names nothing.
        #expect(throws: ServiceError.self) { try ImageParameters(query: url + "&preset=thumb") }
    }

    @Test func presetsOnlyTakesURLPresetFormatAndSig() throws {
        let presets = try ImagePresets(["thumb": "w=300"])
        let parameters = try ImageParameters(query: url + "&preset=thumb&format=webp&sig=00", presets: presets, presetsOnly: true)
        #expect(parameters.width == 300 && parameters.format == .webp)
        for extra in ["&w=10", "&q=5", "&fit=fill", "&enlarge=1", "&h=1"] {
            let error = #expect(throws: ServiceError.self, "\(extra)") {
                try ImageParameters(query: url + "&preset=thumb" + extra, presets: presets, presetsOnly: true)
            }
            #expect(error?.status == 400 && error?.code == "badParameter")
        }
    }

    @Test func badPresetsFailTheStartNamingThePreset() async throws {
        for (definition, why) in [("w=0", "'w'"), ("q=101", "'q'"), ("fit=stretch", "'fit'"), ("url=http://x/", "'url' cannot be preset"),
                                  ("preset=other", "'preset' cannot be preset"), ("sig=00", "'sig' cannot be preset"),
                                  ("w=1&w=2", "given twice"), ("", "sets nothing"), ("bogus=1", "'bogus'")] {
            let error = #expect(throws: ServiceError.self, "\(definition)") { try ImagePresets(["thumb": definition]) }
            #expect(error?.message.hasPrefix("bad preset 'thumb': ") == true, "\(definition)")
            #expect(error?.message.contains(why) == true, "\(definition): \(error?.message ?? "")")
        }
        for name in ["", "a,b", "a b", "a=b", "é"] {
            #expect(throws: ServiceError.self, "\(name)") { try ImagePresets([name: "w=1"]) }
        }
        var flags = ServerConfiguration.Flags()
        flags.presets = ["thumb=w=99999"]
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
        flags.presets = ["thumb"]
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
        flags = .init()
        flags.presetsOnly = true
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
    }

    @Test func presetsFromFlagsEnvironmentAndFileMergeByName() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-presets-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"presets": {"thumb": "w=100", "hero": "w=1200&q=90", "icon": "w=16"}, "presets-only": true}"#.utf8).write(to: file)
        var flags = ServerConfiguration.Flags()
        flags.presets = ["thumb=w=300&h=300&fit=cover"]
        let configuration = try await ServerConfiguration.resolve(flags, environment: [
            ServerConfiguration.configFileVariable: file.path, "WEBIMAGE_PRESET": "icon=w=32,small=w=64&h=64"])
        #expect(configuration.presets == ["thumb": "w=300&h=300&fit=cover", "hero": "w=1200&q=90", "icon": "w=32", "small": "w=64&h=64"])
        #expect(configuration.presetsOnly)
        #expect(configuration.summary.contains("presets: hero, icon, small, thumb (presets only)"))
    }

    @Test func theOutputKeyIsMadeFromTheEffectiveOptions() async throws {
        let directory = try TemporaryDirectory()
        let origin = try await LoopbackServer.start()
        origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        func start(_ presets: [String: String]) async throws -> ServerHarness {
            try await ServerHarness.start(origin: origin) { configuration, _ in
                configuration.presets = presets
                configuration.cacheDirectory = directory.url.path
            }
        }
        let query = "format=png&url=" + origin.url("/photo.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let first = try await start(["a": "w=100", "b": "w=50"])
        let a = try await first.get(query + "&preset=a")
        let b = try await first.get(query + "&preset=b")
        #expect(a.status == 200 && b.status == 200)
        #expect(try ServerTestImages.decode(a.body).width == 100)
        #expect(try ServerTestImages.decode(b.body).width == 50)
        #expect(a.header("ETag") != b.header("ETag"))
        // The preset spelled out is the same output: one entry, one ETag.
        let spelled = try await first.get(query + "&w=100")
        #expect(spelled.header("ETag") == a.header("ETag"))
        try await first.stop()

        // Redefined, over the same disk cache: never the old output.
        let second = try await start(["a": "w=40", "b": "w=50"])
        let redefined = try await second.get(query + "&preset=a")
        #expect(try ServerTestImages.decode(redefined.body).width == 40)
        #expect(redefined.header("ETag") != a.header("ETag"))
        #expect(try await second.get(query + "&preset=b").header("ETag") == b.header("ETag"))
        try await second.stop()
        try await origin.shutdown()
    }

    @Test func presetsOnlyAndSignaturesOverHTTP() async throws {
        let server = try await ServerHarness.start { configuration, _ in
            configuration.presets = ["thumb": "w=32&fit=cover"]
            configuration.presetsOnly = true
            configuration.signingKeys = ["k"]
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let signer = RequestSignature(key: "k")
        // The signature covers the query as sent: the preset's name, not its contents.
        let query = "url=" + server.source("/photo.jpg") + "&preset=thumb&format=png"
        let reply = try await server.get(query + "&sig=" + signer.sign(query))
        #expect(reply.status == 200)
        #expect(try ServerTestImages.decode(reply.body).width == 32)
        let widened = query + "&w=2000"
        let refused = try await server.get(widened + "&sig=" + signer.sign(widened))
        #expect(refused.status == 400 && refused.errorCode == "badParameter")
        let unknown = "url=" + server.source("/photo.jpg") + "&preset=huge"
        let missing = try await server.get(unknown + "&sig=" + signer.sign(unknown))
        #expect(missing.status == 400 && missing.errorCode == "badParameter")
        try await server.stop()
    }
}
