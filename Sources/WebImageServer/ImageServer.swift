#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import WebImage

/// The image service: a Hummingbird application over the WebImage pipeline.
///
/// Endpoints: `GET`/`HEAD /image` (see ``ImageParameters``), `GET /healthz`, `GET /metrics`
/// (Prometheus text), `GET /` (a playground page). ``run(onListening:)`` serves until SIGTERM or SIGINT or ``shutdown()``,
/// then stops accepting connections and lets the requests in flight finish.
public final class ImageServer: Sendable {
    /// The settings it runs with.
    public let configuration: ServerConfiguration
    private let logger: Logger
    private let service: ImageService
    private let metrics: ServiceMetrics
    private let group = Locked<(ServiceGroup?, shutdownRequested: Bool)>((nil, false))

    /// A server with `configuration`; nothing listens until ``run(onListening:)``.
    /// - Throws: ``ServiceError`` for a malformed `--allow-source` entry.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "webimage.serve")) throws {
        self.configuration = configuration
        self.logger = logger
        metrics = ServiceMetrics()
        service = try ImageService(configuration: configuration, metrics: metrics)
    }

    /// Serves until SIGTERM, SIGINT or ``shutdown()``, then lets in-flight requests finish.
    /// `onListening` gets the bound port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        let service = service, metrics = metrics, maxAge = configuration.cacheControlMaxAge
        PlaygroundPage.register(on: router)
        router.get("healthz") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        router.get("metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        router.get("image") { request, context in
            do {
                let parameters = try service.parameters(query: request.uri.query ?? "")
                let (image, source) = try await service.image(for: parameters, accept: request.headers[.accept], logger: context.logger)
                let response = ImageResponses.image(image, ifNoneMatch: request.headers[.ifNoneMatch],
                                                    negotiated: parameters.format == .auto, maxAge: maxAge)
                if response.status == .ok, request.method == .get { metrics.sent(bytes: image.body.count) }
                context.logger.debug("image", metadata: ["served.from": "\(source.rawValue)"])
                return response
            } catch {
                return ImageResponses.error(ServiceError.from(error))
            }
        }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "webimage"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        let serviceGroup = ServiceGroup(configuration: .init(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let stopAtOnce = group.withLock { state -> Bool in
            state.0 = serviceGroup
            return state.shutdownRequested
        }
        if stopAtOnce { await serviceGroup.triggerGracefulShutdown() }
        defer { group.withLock { $0.0 = nil } }
        try await serviceGroup.run()
        await service.shutdown()
    }

    /// Starts a graceful shutdown: no new connections, the requests in flight finish, then
    /// ``run(onListening:)`` returns.
    public func shutdown() async {
        let serviceGroup = group.withLock { state -> ServiceGroup? in
            state.shutdownRequested = true
            return state.0
        }
        await serviceGroup?.triggerGracefulShutdown()
    }
}
