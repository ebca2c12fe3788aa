#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `local:///PATH` sources under `--local-root`: served from inside it; every way out (dot
/// segments raw or encoded, encoded slashes, NUL, links out, a host) is 403, what is no regular
/// file (a FIFO, a directory, nothing) is 404, and neither is ever read.
@Suite("webimage serve: local sources", .timeLimit(.minutes(1)))
struct ServerLocalSourceTests {
    private func query(_ url: String) -> String {
        "url=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&format=png"
    }

    @Test func withoutALocalRootLocalSourcesAre403() async throws {
        let server = try await ServerHarness.start()
        let reply = try await server.get(query("local:///a.png"))
        #expect(reply.status == 403 && reply.errorCode == "sourceNotAllowed")
        try await server.stop()
    }

    @Test func filesInsideTheRootAreServedAndNothingOutsideIs() async throws {
        let files = try HostileLocalRoot()
        let server = try await ServerHarness.start { configuration, _ in configuration.localRoot = files.root.path }
        for url in ["local:///a.png", "local:///sub/deeper/b%20image.png", "local:///inside-link.png"] {
            let reply = try await server.get(query(url))
            #expect(reply.status == 200, "\(url)")
            #expect(try ServerTestImages.decode(reply.body).width == 12, "\(url)")
        }
        for url in HostileLocalRoot.escapes where URL(string: url) != nil {
            let reply = try await server.get(query(url))
            #expect(reply.status == 403 && reply.errorCode == "sourceNotAllowed", "\(url): \(reply.status) \(reply.errorCode ?? "")")
            #expect(!reply.body.contains(files.secret))
        }
        for url in HostileLocalRoot.notFiles {
            let reply = try await server.get(query(url))
            #expect(reply.status == 404 && reply.errorCode == "sourceNotFound", "\(url): \(reply.status) \(reply.errorCode ?? "")")
            #expect(!String(decoding: reply.body, as: UTF8.self).contains(files.base.url.path), "the root's place is not told")
        }
        // An origin cannot redirect into the root.
        server.origin.route("/to-local", .redirect(to: "local:///a.png"))
        let hop = try await server.get("url=" + server.source("/to-local"))
        #expect(hop.status == 403 && hop.errorCode == "sourceNotAllowed")
        try await server.stop()
    }

    @Test func theAllowedSourceListNarrowsTheRoot() async throws {
        let files = try HostileLocalRoot()
        let server = try await ServerHarness.start { configuration, _ in
            configuration.localRoot = files.root.path
            configuration.allowedSourcePrefixes = ["local:///sub/"]
        }
        #expect(try await server.get(query("local:///sub/deeper/b%20image.png")).status == 200)
        let outside = try await server.get(query("local:///a.png"))
        #expect(outside.status == 403 && outside.errorCode == "sourceNotAllowed")
        try await server.stop()
    }

    @Test func theRootMustBeADirectory() async throws {
        let files = try HostileLocalRoot()
        var flags = ServerConfiguration.Flags()
        flags.localRoot = files.root.appendingPathComponent("a.png").path
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
        let fromEnvironment = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_LOCAL_ROOT": files.root.path])
        #expect(fromEnvironment.localRoot == files.root.path)
        #expect(fromEnvironment.summary.contains("local-root: \(files.root.path)"))
    }
}
