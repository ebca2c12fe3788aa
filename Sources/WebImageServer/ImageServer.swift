#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle
import UnixSignals
import WebImage

/// `webimage serve`: a Hummingbird application with a ``WebImageService`` mounted at `/`.
///
/// Endpoints: `GET`/`HEAD /image` (see ``ImageParameters``), `GET /healthz` (liveness),
/// `GET /readyz` (readiness: 503 while starting and from SIGTERM on), `GET /metrics`
/// (Prometheus text), `GET /` (a playground page). ``run(alongside:onListening:)`` serves until SIGTERM or
/// SIGINT or ``shutdown()``, then (after ``ServerConfiguration/shutdownDelay``) stops accepting
/// connections, lets the requests in flight finish and the background writes land.
public final class ImageServer: Sendable {
    /// Where the server's metrics are collected.
    public enum MetricsScope: Sendable {
        /// A registry of the server's own: `/metrics` shows the service's instruments only (several servers in one process).
        case server
        /// The process's: swift-metrics is bootstrapped with the server's registry, so `/metrics`
        /// shows the library's instruments (`webimage_downloader_*`) too. Once per process.
        case process
    }

    /// The settings it runs with.
    public let configuration: ServerConfiguration
    /// The image service it serves.
    public let service: WebImageService
    private let logger: Logger
    private let registry: PrometheusCollectorRegistry
    private let readiness = Locked(Readiness.starting)
    private let group = Locked<(ServiceGroup?, shutdownRequested: Bool)>((nil, false))

    /// A server with `configuration`; nothing listens until ``run(alongside:onListening:)``.
    /// - Throws: ``ServiceError`` for a setting that cannot work.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "webimage.serve"),
                metrics scope: MetricsScope = .server) throws {
        self.configuration = configuration
        self.logger = logger
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        let factory = ServiceMetrics.prometheusFactory(registry)
        if case .process = scope { MetricsSystem.bootstrap(factory) }
        service = try WebImageService(configuration: configuration, logger: logger, metricsFactory: factory)
    }

    /// Serves until SIGTERM, SIGINT or ``shutdown()``, then lets in-flight requests finish.
    /// `onListening` gets the bound port (useful with port 0). `services` run in the server's
    /// group, started before it and stopped after it (a tracer's exporter, which then exports
    /// the spans of the last requests).
    public func run(alongside services: [any Service] = [], onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestMetricsMiddleware(metrics: service.metrics))
        PlaygroundPage.register(on: router)
        let registry = registry, readiness = readiness
        router.get("healthz") { _, _ in Self.text("ok\n") }
        router.get("readyz") { _, _ in
            let state = readiness.withLock { $0 }
            return Self.text(state == .ready ? "ready\n" : "\(state.rawValue)\n", status: state == .ready ? .ok : .serviceUnavailable)
        }
        router.get("metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        service.addRoutes(to: router)
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(Int64(configuration.clientTimeout.components.seconds) * 1_000_000_000
                                                                           + configuration.clientTimeout.components.attoseconds / 1_000_000_000))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "webimage"),
            onServerRunning: { channel in
                readiness.withLock { if $0 == .starting { $0 = .ready } }
                await onListening(channel.localAddress?.port ?? 0)
            },
            logger: logger
        )
        // Shut down in reverse: readiness first (503, then the delay), then the HTTP server, then the background writes.
        let serviceGroup = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0) } + [.init(service: service.backgroundService), .init(service: app),
                       .init(service: ReadinessService(readiness: readiness, delay: configuration.shutdownDelay))],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let stopAtOnce = group.withLock { state -> Bool in
            state.0 = serviceGroup
            return state.shutdownRequested
        }
        if stopAtOnce { await serviceGroup.triggerGracefulShutdown() }
        defer { group.withLock { $0.0 = nil } }
        try await serviceGroup.run()
    }

    /// Starts a graceful shutdown: `/readyz` answers 503, then (after the shutdown delay) no new
    /// connections, the requests in flight finish, the background writes land, and
    /// ``run(alongside:onListening:)`` returns.
    public func shutdown() async {
        let serviceGroup = group.withLock { state -> ServiceGroup? in
            state.shutdownRequested = true
            return state.0
        }
        await serviceGroup?.triggerGracefulShutdown()
    }

    private static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// What `/readyz` says.
enum Readiness: String, Sendable {
    case starting, ready, draining
}

/// Turns readiness to `draining` when the group starts its graceful shutdown, then holds the
/// shutdown for the delay (the HTTP server, shut down after it, serves meanwhile).
struct ReadinessService: Service {
    let readiness: Locked<Readiness>
    let delay: Duration

    func run() async throws {
        do { try await gracefulShutdown() } catch { return }
        readiness.withLock { $0 = .draining }
        if delay > .zero { try? await Task.sleep(for: delay) }
    }
}
