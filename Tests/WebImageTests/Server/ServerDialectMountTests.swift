import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--dialect NAME[=PREFIX]`, the mount (#45): a dialect at `/` beside the service's own routes,
/// at a prefix, from the environment, refused twice at one prefix, and inside an application's
/// router at its mount point. Exercised with thumbor's unsafe URLs, which need no peer.
@Suite("webimage serve: dialect mounts", .serialized, .timeLimit(.minutes(3)))
struct ServerDialectMountTests {
    private func thumbor(_ prefix: String = "/") -> (inout ServerConfiguration, LoopbackServer) -> Void {
        { configuration, _ in configuration.dialects = [DialectMount(name: .thumbor, prefix: prefix)] }
    }

    private func expectImage(_ reply: HTTPReply, _ width: Int, _ height: Int, _ what: String,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(reply.status == 200, "\(what): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
        guard reply.status == 200 else { return }
        let image = try ServerTestImages.decode(reply.body)
        #expect(image.width == width && image.height == height, "\(what)", sourceLocation: sourceLocation)
    }

    @Test func atTheRootTheServicesOwnRoutesStillAnswer() async throws {
        let server = try await ServerHarness.start(thumbor())
        server.origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        // The source as libthumbor writes it (`http://` unencoded: `//` in the path) and encoded.
        let plain = server.origin.url("/a.jpg").absoluteString
        try expectImage(try await ServerTestClient.send(port: server.port, "/unsafe/40x30/\(plain)"), 40, 30, "// kept")
        try expectImage(try await ServerTestClient.send(port: server.port, "/unsafe/40x30/\(server.source("/a.jpg"))"), 40, 30, "encoded")
        for path in ["/healthz", "/readyz", "/metrics", "/"] {
            let reply = try await ServerTestClient.send(port: server.port, path)
            #expect(reply.status == 200, "\(path) under a dialect at /: \(reply.status)")
        }
        try expectImage(try await server.get("url=\(server.source("/a.jpg"))&w=20&h=15&fit=fill"), 20, 15, "/image")
        let info = try await ServerTestClient.send(port: server.port, "/info?url=\(server.source("/a.jpg"))")
        #expect(info.status == 200 && info.header("Content-Type") == "application/json")
        // What is neither the service's nor thumbor's: thumbor's 400 for a URL without hash or unsafe.
        #expect(try await ServerTestClient.send(port: server.port, "/nothing").status == 400)
        try await server.stop()
    }

    @Test func atAPrefixOnlyPathsBelowItAreThumbors() async throws {
        let server = try await ServerHarness.start(thumbor("/thumbs/"))
        server.origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let plain = server.origin.url("/a.jpg").absoluteString
        try expectImage(try await ServerTestClient.send(port: server.port, "/thumbs/unsafe/fit-in/64x64/\(plain)"), 64, 48, "below the prefix")
        #expect(try await ServerTestClient.send(port: server.port, "/unsafe/40x30/\(plain)").status == 404)
        #expect(try await ServerTestClient.send(port: server.port, "/thumbsx/unsafe/40x30/\(plain)").status == 404)
        #expect(try await ServerTestClient.send(port: server.port, "/healthz").status == 200)
        try await server.stop()
    }

    @Test(.enabled(if: ServeInstance.isAvailable, "the webimage binary is not built (swift build --build-tests builds it)"))
    func fromTheEnvironmentAndTwoAtOnePrefixRefused() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let serve = try await ServeInstance.start(["--allow-private-source", "127.0.0.1:\(origin.port)"],
                                                  environment: ["WEBIMAGE_DIALECT": "thumbor=/th"])
        try expectImage(try await ServerTestClient.send(port: serve.port, "/th/unsafe/40x30/\(origin.url("/a.jpg").absoluteString)"),
                        40, 30, "WEBIMAGE_DIALECT")
        #expect(serve.child.output.contains("dialect: thumbor=/th"))
        await serve.stop()
        try await origin.shutdown()

        let binary = try #require(CrashSafetyTests.binary).path
        let refused = try await ChildProcess.run(binary, ["serve", "--port", "0", "--dialect", "thumbor=/x", "--dialect", "imgproxy=/x/"])
        #expect(refused.status == 64, "exit status \(refused.status)")
        #expect(refused.stderr.contains("dialects thumbor=/x and imgproxy=/x are mounted at the same prefix /x"), "\(refused.stderr)")
        let unknown = try await ChildProcess.run(binary, ["serve", "--port", "0", "--dialect", "thumbnail"])
        #expect(unknown.status == 64 && unknown.stderr.contains("dialect 'thumbnail'"), "\(unknown.stderr)")
    }

    @Test func insideAnApplicationBelowItsMountPoint() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        var settings = ServerConfiguration(host: "127.0.0.1", port: 0, privateSourceHosts: ["127.0.0.1:\(origin.port)"])
        settings.dialects = [DialectMount(name: .thumbor, prefix: "/t")]
        let service = try WebImageService(configuration: settings)
        let router = Router(context: BasicRequestContext.self)
        router.get("hello") { _, _ in "hello from the app" }
        service.addRoutes(to: router, atPath: "/img")
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0); continuation.finish() })
        let group = ServiceGroup(configuration: .init(services: [.init(service: service.backgroundService), .init(service: app)],
                                                      logger: Logger(label: "test.app")))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let plain = origin.url("/a.jpg").absoluteString
        try expectImage(try await ServerTestClient.send(port: port, "/img/t/unsafe/40x30/\(plain)"), 40, 30, "mounted")
        #expect(try await ServerTestClient.send(port: port, "/hello").status == 200)
        let source = plain.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        #expect(try await ServerTestClient.send(port: port, "/img/info?url=\(source)").status == 200)
        #expect(try await ServerTestClient.send(port: port, "/t/unsafe/40x30/\(plain)").status == 404, "outside the mount point")
        await group.triggerGracefulShutdown()
        try await running.value
        try await origin.shutdown()
    }
}
