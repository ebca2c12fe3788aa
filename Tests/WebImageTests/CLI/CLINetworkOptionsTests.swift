import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// The network options of `webimage load`: extreme values are refused with a message (never a
/// trap), bad headers are refused before anything is sent.
@Suite("webimage network options", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct CLINetworkOptionsTests {
    @Test(arguments: [["--timeout", "inf"], ["--timeout", "nan"], ["--timeout", "-1"], ["--timeout", "0"]])
    func extremeTimeoutsAreRefusedWithAMessage(_ option: [String]) async throws {
        let directory = try TemporaryDirectory()
        let run = try await runCLI(["load", "http://127.0.0.1:9/a.png", "--cache-dir", directory.url.path] + option)
        #expect(run.status != 0)
        #expect(run.status < 128, "the process was killed by a signal (a trap): \(run.status)")
        #expect(run.stderr.contains("--timeout"), "\(run.stderr)")
        #expect(!run.stderr.contains("runtime failure"), "\(run.stderr)")
    }

    @Test func aHugeTimeoutIsClampedNotTrapped() async throws {
        try await withServer { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let directory = try TemporaryDirectory()
            let run = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", directory.url.path,
                                        "--timeout", "1e300"])
            #expect(run.status == 0, "\(run.stderr)")
        }
    }

    @Test func aHeaderWithALineBreakIsRefused() async throws {
        try await withServer { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let directory = try TemporaryDirectory()
            let run = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", directory.url.path,
                                        "--header", "X-A: 1\r\nInjected: yes"])
            #expect(run.status != 0)
            #expect(run.stderr.contains("--header"), "\(run.stderr)")
            #expect(server.totalRequestCount == 0)
        }
    }

    @Test func loadHelpListsTheNetworkOptions() async throws {
        let run = try await runCLI(["load", "--help"])
        for option in ["--resource-timeout", "--ca-file", "--allow-invalid-certificates", "--timeout"] {
            #expect(run.stdout.contains(option), "\(option) missing from load --help")
        }
    }

    @Test func theResourceTimeoutEndsADrip() async throws {
        try await withServer { server in
            server.route("/drip.jpg", LoopbackResponse(body: .bytes(testBytes(10_000)), drip: (chunkSize: 1, interval: .milliseconds(20))))
            let directory = try TemporaryDirectory()
            let start = ContinuousClock.now
            let run = try await runCLI(["load", server.url("/drip.jpg").absoluteString, "--cache-dir", directory.url.path,
                                        "--resource-timeout", "0.4"])
            #expect(run.status == 1)
            #expect(run.stdout.contains("timedOut"), "\(run.stdout)")
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }

    @Test(.enabled(if: LoopbackTLS.isAvailable, "the openssl command is not installed"))
    func aCAFileOrAllowInvalidCertificatesReachesASelfSignedServer() async throws {
        let tls = try #require(try LoopbackTLS.selfSigned())
        try await withServer(tls: tls) { server in
            server.route("/a.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG(width: 8, height: 8))))
            let url = server.url("/a.jpg").absoluteString
            let directory = try TemporaryDirectory()
            let pem = directory.url.appendingPathComponent("server.pem")
            try Data(tls.certificatePEM.utf8).write(to: pem)

            let refused = try await runCLI(["load", url, "--cache-dir", directory.url.appendingPathComponent("c1").path])
            #expect(refused.status == 1)
            #expect(refused.stdout.contains("untrustedCertificate"), "\(refused.stdout)")

            let trusted = try await runCLI(["load", url, "--cache-dir", directory.url.appendingPathComponent("c2").path,
                                            "--ca-file", pem.path])
            #expect(trusted.status == 0, "\(trusted.stdout) \(trusted.stderr)")

            let insecure = try await runCLI(["load", url, "--cache-dir", directory.url.appendingPathComponent("c3").path,
                                             "--allow-invalid-certificates"])
            #expect(insecure.status == 0, "\(insecure.stdout) \(insecure.stderr)")
            #expect(server.requestCount(for: "/a.jpg") == 2)
        }
    }

    @Test func aMissingOrEmptyCAFileIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let empty = directory.url.appendingPathComponent("empty.pem")
        try Data("hello".utf8).write(to: empty)
        for file in [empty.path, directory.url.appendingPathComponent("missing.pem").path] {
            let run = try await runCLI(["load", "https://127.0.0.1:9/a.png", "--cache-dir", directory.url.path, "--ca-file", file])
            #expect(run.status != 0)
            #expect(run.stderr.contains("--ca-file"), "\(run.stderr)")
        }
    }
}
