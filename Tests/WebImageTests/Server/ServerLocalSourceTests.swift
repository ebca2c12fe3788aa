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
        // A link that leads out is answered as a missing file is (the same status, code and
        // message but for the path): whether something exists outside the root is not told.
        let missing = try await server.get(query("local:///missing.png"))
        for url in HostileLocalRoot.escapes where URL(string: url) != nil {
            let reply = try await server.get(query(url))
            #expect(!reply.body.contains(files.secret))
            if HostileLocalRoot.linksOut.contains(url) {
                #expect(reply.status == 404 && reply.errorCode == "sourceNotFound", "\(url): \(reply.status) \(reply.errorCode ?? "")")
                let path = try #require(URL(string: url)).path(percentEncoded: true)
                #expect(reply.errorMessage?.replacingOccurrences(of: path, with: "/missing.png") == missing.errorMessage, "\(url)")
            } else {
                #expect(reply.status == 403 && reply.errorCode == "sourceNotAllowed", "\(url): \(reply.status) \(reply.errorCode ?? "")")
            }
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

    @Test func oneSourceSpelledSeveralWaysIsOneCacheEntry() async throws {
        func normalized(_ url: String) throws -> String {
            try ImageParameters(query: "url=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!).url.absoluteString
        }
        for spelling in ["local:///sub/a.png", "LOCAL:///sub/a.png", "local:sub/a.png", "local:/sub/a.png", "local:////sub//a.png"] {
            #expect(try normalized(spelling) == "local:///sub/a.png", "\(spelling)")
        }
        for spelling in ["HTTP://Example.COM:80/A.png", "http://example.com/A.png"] {
            #expect(try normalized(spelling) == "http://example.com/A.png", "\(spelling)")
        }
        #expect(try normalized("https://example.com") == "https://example.com/")
        #expect(try normalized("https://example.com:8443/a?b=C") == "https://example.com:8443/a?b=C")

        let files = try HostileLocalRoot()
        let server = try await ServerHarness.start { configuration, _ in configuration.localRoot = files.root.path }
        var replies: [HTTPReply] = []
        for spelling in ["local:///a.png", "LOCAL:///a.png", "local:a.png", "local:////a.png"] { replies.append(try await server.get(query(spelling))) }
        #expect(replies.allSatisfy { $0.status == 200 })
        #expect(Set(replies.compactMap { $0.header("ETag") }).count == 1)
        let metrics = PrometheusText(String(decoding: try await ServerTestClient.send(port: server.port, "/metrics").body, as: UTF8.self))
        #expect(metrics.sum("webimage_renders_total") == 1)
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
