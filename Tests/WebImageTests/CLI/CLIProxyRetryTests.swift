import Foundation
import Testing
import WebImage
import WebImageTestSupport

/// `webimage load --proxy URL` (else the environment's proxy variables) and `--retries N`.
@Suite("webimage proxy and retries", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct CLIProxyRetryTests {
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A cache directory of its own for one run.
    private func cacheDirectory() -> String {
        directory.url.appendingPathComponent(UUID().uuidString).path
    }

    /// The environment without any proxy variable, plus `extra`.
    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }.merging(extra) { $1 }
    }

    @Test(.enabled(if: TinyProxy.isAvailable, "tinyproxy is not installed (scripts/install-deps.sh installs it)"))
    func loadGoesThroughTheProxyGivenOrInTheEnvironment() async throws {
        try await withServer { server in
            server.route("/a.jpg", .image(try sampleJPEG(width: 8, height: 8), contentType: "image/jpeg"))
            try await withTinyProxy { proxy in
                let url = server.url("/a.jpg").absoluteString
                let flag = try await runCLI(["load", url, "--cache-dir", cacheDirectory(), "--proxy", proxy.url()],
                                           environment: environment())
                #expect(flag.status == 0, "\(flag.stderr)")
                #expect(server.requests.last?.headers["via"]?.contains("tinyproxy") == true)
                let fromEnvironment = try await runCLI(["load", url, "--cache-dir", cacheDirectory()],
                                                      environment: environment(["http_proxy": proxy.url()]))
                #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
                #expect(server.requestCount(for: "/a.jpg") == 2)
                #expect(server.requests.last?.headers["via"]?.contains("tinyproxy") == true)
                // NO_PROXY from the environment applies to --proxy too.
                let bypassed = try await runCLI(["load", url, "--cache-dir", cacheDirectory(), "--proxy", proxy.url()],
                                               environment: environment(["NO_PROXY": "127.0.0.1"]))
                #expect(bypassed.status == 0, "\(bypassed.stderr)")
                #expect(server.requestCount(for: "/a.jpg") == 3)
                #expect(server.requests.last?.headers["via"] == nil)
            }
        }
    }

    @Test(.enabled(if: TinyProxy.isAvailable, "tinyproxy is not installed (scripts/install-deps.sh installs it)"))
    func a407IsReportedWithItsCode() async throws {
        try await withServer { server in
            server.route("/a.jpg", .image(try sampleJPEG(width: 8, height: 8), contentType: "image/jpeg"))
            try await withTinyProxy(basicAuth: (user: "alice", password: "s3cret")) { proxy in
                let run = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", cacheDirectory(),
                                            "--proxy", proxy.url(), "--json"], environment: environment())
                #expect(run.status != 0)
                #expect(run.stdout.contains("proxyAuthenticationRequired"), "\(run.stdout) \(run.stderr)")
            }
        }
    }

    @Test func anUnusableProxyIsRefusedWithAMessage() async throws {
        for proxy in ["socks5://127.0.0.1:1080", "http://"] {
            let run = try await runCLI(["load", "http://127.0.0.1:9/a.png", "--cache-dir", cacheDirectory(),
                                        "--proxy", proxy], environment: environment())
            #expect(run.status != 0)
            #expect(run.status < 128, "killed by a signal: \(run.status)")
            #expect(run.stderr.contains("--proxy"), "\(run.stderr)")
        }
    }

    @Test func retriesSendATransientFailureAgain() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 8, height: 8)
            server.route("/a.jpg", sequence: [LoopbackResponse(status: 503, headers: ["Retry-After": "0"]),
                                              .image(jpeg, contentType: "image/jpeg")])
            let without = try await runCLI(["load", server.url("/a.jpg").absoluteString, "--cache-dir", cacheDirectory()],
                                           environment: environment())
            #expect(without.status != 0, "no retries by default")
            #expect(server.requestCount(for: "/a.jpg") == 1)

            server.route("/b.jpg", sequence: [LoopbackResponse(status: 503, headers: ["Retry-After": "0"]),
                                              .image(jpeg, contentType: "image/jpeg")])
            let with = try await runCLI(["load", server.url("/b.jpg").absoluteString, "--cache-dir", cacheDirectory(),
                                         "--retries", "2"], environment: environment())
            #expect(with.status == 0, "\(with.stderr)")
            #expect(server.requestCount(for: "/b.jpg") == 2)
        }
    }

    @Test(arguments: ["-1", "21", "x"])
    func aBadRetryCountIsRefused(_ value: String) async throws {
        let run = try await runCLI(["load", "http://127.0.0.1:9/a.png", "--cache-dir", cacheDirectory(), "--retries", value],
                                   environment: environment())
        #expect(run.status != 0)
        #expect(run.status < 128)
        #expect(run.stderr.contains("--retries"), "\(run.stderr)")
    }
}
