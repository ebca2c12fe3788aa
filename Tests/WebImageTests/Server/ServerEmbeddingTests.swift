import Foundation
import Hummingbird
import InMemoryTracing
import Logging
import Prometheus
import ServiceLifecycle
import Testing
import Tracing
import WebImage
import WebImageServer
import WebImageTestSupport

/// The service as a part of an application: mounted on a Hummingbird application's router under
/// a prefix beside the application's own routes and middleware, its background writes a
/// `Service` in the application's group; called through the framework-neutral entry point;
/// observed through the application's metrics factory and tracer.
@Suite("webimage serve embedded in an application", .serialized, .timeLimit(.minutes(2)))
struct ServerEmbeddingTests {
    /// The application's own middleware: every response says who answered.
    struct AppHeader<Context: RequestContext>: RouterMiddleware {
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            var response = try await next(request, context)
            response.headers[.init("X-App")!] = "yes"
            return response
        }
    }

    private func configuration(_ origin: LoopbackServer) -> ServerConfiguration {
        ServerConfiguration(host: "127.0.0.1", port: 0, privateSourceHosts: ["127.0.0.1:\(origin.port)"])
    }

    @Test func anApplicationMountsTheServiceUnderAPrefixBesideItsOwnRoutes() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let cache = try TemporaryDirectory()
        var settings = configuration(origin)
        settings.cacheDirectory = cache.url.path
        // The application's registry: the service's instruments land in it, no registry of its own.
        let registry = PrometheusCollectorRegistry()
        let service = try WebImageService(configuration: settings, metricsFactory: PrometheusMetricsFactory(registry: registry))
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: AppHeader())
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

        let hello = try await ServerTestClient.send(port: port, "/hello")
        #expect(hello.status == 200 && String(decoding: hello.body, as: UTF8.self) == "hello from the app")
        let source = origin.url("/a.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let image = try await ServerTestClient.send(port: port, "/img/image?url=\(source)&w=40&format=png")
        #expect(image.status == 200 && image.header("Content-Type") == "image/png")
        #expect(image.header("X-App") == "yes", "the application's middleware did not run around the service's route")
        #expect(try ServerTestImages.decode(image.body).width == 40)
        #expect(try await ServerTestClient.send(port: port, "/image?url=\(source)").status == 404, "mounted at the root too")
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(PrometheusText(text).sum("webimage_renders_total") == 1, "\(text)")

        // Graceful shutdown: the server stops, then the background service lands the disk writes.
        await group.triggerGracefulShutdown()
        try await running.value
        let files = try FileManager.default.subpathsOfDirectory(atPath: cache.url.path)
        #expect(files.contains { !$0.hasPrefix(".") && !$0.contains("journal") }, "no cache entry written: \(files)")
        try await origin.shutdown()
    }

    @Test func theFrameworkNeutralEntryPointAnswersWithoutAServer() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let service = try WebImageService(configuration: configuration(origin))
        let source = origin.url("/a.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let image = await service.respond(to: ServiceRequest(path: "/image", query: "url=\(source)&w=24&format=auto",
                                                             headers: [("Accept", "image/webp,*/*")]))
        #expect(image.status == 200 && image.header("content-type") == "image/webp" && image.header("Vary") == "Accept")
        #expect(try ServerTestImages.decode(image.body).width == 24)
        let revalidated = await service.respond(to: ServiceRequest(path: "/image", query: "url=\(source)&w=24&format=auto",
                                                                   headers: [("Accept", "image/webp"), ("If-None-Match", image.header("ETag") ?? "-")]))
        #expect(revalidated.status == 304 && revalidated.body.isEmpty)
        let bad = await service.respond(to: ServiceRequest(path: "/image", query: "url=\(source)&w=-1"))
        #expect(bad.status == 400 && bad.header("Content-Type") == "application/json")
        #expect(HTTPReply(status: bad.status, headers: bad.headers.map { ($0.name, $0.value) }, body: bad.body).errorCode == "badParameter")
        #expect(await service.respond(to: ServiceRequest(path: "/nothing", query: "")).status == 404)
        #expect(await service.respond(to: ServiceRequest(method: "POST", path: "/image", query: "url=\(source)")).status == 405)
        await service.shutdown()
        try await origin.shutdown()
    }

    @Test func aRequestIsASpanItsFetchAndRenderStagesChildrenAndTheTraceGoesOnToTheOrigin() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/a.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let tracer = W3CInMemoryTracer()
        let service = try WebImageService(configuration: configuration(origin), tracer: tracer)
        let source = origin.url("/a.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736", caller = "00f067aa0ba902b7"
        let response = await service.respond(to: ServiceRequest(path: "/image", query: "url=\(source)&w=30&format=jpeg",
                                                                headers: [("traceparent", "00-\(traceID)-\(caller)-01")]))
        #expect(response.status == 200)
        await service.shutdown()

        let spans = tracer.recorded.finishedSpans
        let request = try #require(spans.first { $0.operationName == "GET /image" }, "\(spans.map { $0.operationName })")
        #expect(request.traceID == traceID && request.parentSpanID == caller && request.kind == .server)
        #expect(request.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
        let fetch = try #require(spans.first { $0.operationName == "fetch source" })
        #expect(fetch.traceID == traceID && fetch.parentSpanID == request.spanID && fetch.kind == .client)
        #expect(fetch.attributes["webimage.source.bytes"]?.toSpanAttribute() == .int64(Int64(ServerTestImages.photo.count)))
        // The render's stages, children of the request's span, with their sizes.
        let decode = try #require(spans.first { $0.operationName == "decode" })
        let transform = try #require(spans.first { $0.operationName == "transform" })
        let encode = try #require(spans.first { $0.operationName == "encode" })
        for stage in [decode, transform, encode] {
            #expect(stage.traceID == traceID && stage.parentSpanID == request.spanID, "\(stage.operationName)")
        }
        #expect(decode.attributes["webimage.source.bytes"]?.toSpanAttribute() == .int64(Int64(ServerTestImages.photo.count)))
        #expect(decode.attributes["webimage.decoded.width"] != nil)
        #expect(transform.attributes["webimage.output.width"]?.toSpanAttribute() == .int64(30))
        #expect(encode.attributes["webimage.output.bytes"]?.toSpanAttribute() == .int64(Int64(response.body.count)))
        #expect(encode.attributes["webimage.output.format"]?.toSpanAttribute() == .string("jpeg"))
        // The origin saw the trace go on: same trace, the fetch's span as the parent.
        let sent = try #require(origin.requests.first?.headers["traceparent"])
        #expect(sent == "00-\(traceID)-\(fetch.spanID)-01")
        try await origin.shutdown()
    }
}
