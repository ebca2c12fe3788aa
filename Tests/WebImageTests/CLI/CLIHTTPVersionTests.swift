import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `webimage load --http-version`: HTTP/2 against the loopback h2 server (by ALPN over TLS, and
/// h2c by prior knowledge), HTTP/1.1 when asked, a bad value refused.
@Suite("webimage --http-version", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct CLIHTTPVersionTests {
    @Test(arguments: [LoopbackProtocol.h2, .h2c])
    func loadOverHTTP2Succeeds(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { server in
            for path in ["/a.jpg", "/b.jpg"] {
                server.route(path, LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            }
            let directory = try TemporaryDirectory()
            var arguments = ["load", server.url("/a.jpg").absoluteString, server.url("/b.jpg").absoluteString,
                             "--cache-dir", directory.url.path, "--no-cache", "--http-version", "2", "--json"]
            if let pem = server.certificatePEM {
                let file = directory.url.appendingPathComponent("ca.pem")
                try Data(pem.utf8).write(to: file)
                arguments += ["--ca-file", file.path]
            }
            let run = try await runCLI(arguments)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.components(separatedBy: "\"status\":\"ok\"").count == 3, "\(run.stdout)")
            #expect(server.requests.count == 2)
            #expect(server.requests.allSatisfy { $0.version == "HTTP/2.0" })
            #expect(server.acceptedConnectionCount == 1)
        }
    }

    /// `auto` is the default: an https server offering h2 gets HTTP/2 without the option.
    @Test func autoIsTheDefaultAndPicksHTTP2() async throws {
        #expect(try await versionsSpokenToAnH2Server(loading: []) == ["HTTP/2.0"])
    }

    @Test func http1IsSpokenWhenAsked() async throws {
        #expect(try await versionsSpokenToAnH2Server(loading: ["--http-version", "1.1"]) == ["HTTP/1.1"])
    }

    /// The HTTP versions of the requests an h2 (ALPN) server saw when `webimage load` fetched one
    /// image from it with `options`, trusting its certificate.
    private func versionsSpokenToAnH2Server(loading options: [String]) async throws -> [String] {
        var versions: [String] = []
        try await withServer(.h2) { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let directory = try TemporaryDirectory()
            let file = directory.url.appendingPathComponent("ca.pem")
            try Data((server.certificatePEM ?? "").utf8).write(to: file)
            let run = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", directory.url.path,
                                        "--ca-file", file.path] + options)
            #expect(run.status == 0, "\(run.stderr)")
            versions = server.requests.map(\.version)
        }
        return versions
    }

    @Test(arguments: ["3", "h2", "1.0", ""])
    func aBadValueIsRefused(_ value: String) async throws {
        let directory = try TemporaryDirectory()
        let run = try await runCLI(["load", "http://127.0.0.1:9/a.png", "--cache-dir", directory.url.path, "--http-version", value])
        #expect(run.status != 0)
        #expect(run.status < 128, "the process was killed by a signal: \(run.status)")
        #expect(run.stderr.contains("--http-version"), "\(run.stderr)")
    }

    @Test func loadHelpNamesTheOption() async throws {
        let run = try await runCLI(["load", "--help"])
        #expect(run.stdout.contains("--http-version"))
        #expect(run.stdout.contains("auto|1.1|2"))
    }
}
