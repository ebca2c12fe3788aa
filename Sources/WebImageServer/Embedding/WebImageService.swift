#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Metrics
import Tracing
import WebImage

/// The image service as a part an application mounts: `GET /image` and `GET /info` over the
/// WebImage pipeline, answered through ``respond(to:logger:)`` from any HTTP framework, or
/// through Hummingbird routes (``addRoutes(to:atPath:)``). ``ImageServer`` (`webimage serve`) is
/// one application built on it.
///
/// Instruments are made through the metrics factory it is given (the application's; by default
/// the process's `MetricsSystem`), spans through the tracer it is given (by default the process's
/// `InstrumentationSystem`), and each request logs to the logger it is answered with. Writes that
/// outlive a response (the disk cache, the result store) run in the background: add
/// ``backgroundService`` to the application's `ServiceGroup`, so a graceful shutdown waits for
/// them, or call ``shutdown()`` before the process exits.
public final class WebImageService: Sendable {
    /// The settings it runs with.
    public let configuration: ServerConfiguration
    let service: ImageService
    let metrics: ServiceMetrics
    let tracer: any Tracer
    private let logger: Logger
    /// `--dialect`'s grammars, the longest prefix first (the first that holds a path answers it).
    private let dialects: [(mount: DialectMount, parser: any URLDialect)]

    /// A service with `configuration`.
    /// - Parameters:
    ///   - configuration: the service's settings, as `webimage serve` resolves them from flags,
    ///     environment and a config file (``ServerConfiguration/resolve(_:environment:memory:)``).
    ///   - logger: for what happens outside a request (background writes); requests log to the logger they are answered with.
    ///   - metricsFactory: where its instruments are made; `nil`: `MetricsSystem.factory`.
    ///   - tracer: where its spans go; `nil`: `InstrumentationSystem.tracer`.
    /// - Throws: ``ServiceError`` for a setting that cannot work (a malformed allow-list entry, preset or result store).
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "webimage.serve"),
                metricsFactory: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer
        metrics = ServiceMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        service = try ImageService(configuration: configuration, metrics: metrics, tracer: tracer, logger: logger)
        try DialectMount.checkDistinct(configuration.dialects)
        dialects = try configuration.dialects.sorted { $0.prefix.count > $1.prefix.count }.map { mount in
            switch mount.name {
            case .imgproxy: (mount, try ImgproxyDialect(configuration: configuration))
            case .thumbor: (mount, try ThumborDialect(configuration: configuration))
            }
        }
    }

    /// Answers `request`: `/image` (``ImageParameters``), `/info` (``/WebImage/ImageInfo`` as JSON:
    /// `format`, `width`, `height`, `frames`, `orientation` (EXIF 1-8), `hasAlpha`, `bytes`,
    /// `colorProfile`, the profile's description or null); anything else is 404, a method
    /// other than `GET` or `HEAD` 405. A `HEAD` is answered as its `GET` (the framework drops
    /// the body when it sends the response). Never throws: failures are their JSON error responses.
    public func respond(to request: ServiceRequest, logger: Logger? = nil) async -> ServiceResponse {
        let logger = logger ?? self.logger
        guard request.method == "GET" || request.method == "HEAD" else {
            return ImageResponses.error(ServiceError(status: 405, code: "methodNotAllowed", message: "\(request.method) is not allowed: use GET or HEAD"))
        }
        switch request.path {
        case "/image", "image": return await traced("GET /image", request) { span in await image(request, span: span, logger: logger) }
        case "/info", "info": return await traced("GET /info", request) { _ in await info(request) }
        default:
            let path = request.path.hasPrefix("/") ? request.path : "/" + request.path
            for (mount, parser) in dialects {
                guard let relative = mount.relativePath(of: path) else { continue }
                return await traced("GET \(mount.name.rawValue)", request) { span in
                    await dialectImage(request, path: relative, parser: parser, span: span, logger: logger)
                }
            }
            return ImageResponses.error(.notFound("no endpoint \(request.method) \(request.path)"))
        }
    }

    /// Finishes the background writes under way, then closes the service's connections.
    public func shutdown() async {
        await service.shutdown()
    }

    private func image(_ request: ServiceRequest, span: any Span, logger: Logger) async -> ServiceResponse {
        do {
            let parameters = try service.parameters(query: request.query)
            let (image, source) = try await service.image(for: parameters, accept: request.header("Accept"), logger: logger)
            span.attributes["webimage.served_from"] = source.rawValue
            span.attributes["webimage.output.bytes"] = image.body.count
            let response = ImageResponses.image(image, ifNoneMatch: request.header("If-None-Match"),
                                                negotiated: parameters.format == .auto, maxAge: configuration.cacheControlMaxAge)
            if response.status == 200, request.method == "GET" { metrics.sent(bytes: image.body.count) }
            logger.debug("image", metadata: ["served.from": "\(source.rawValue)"])
            return response
        } catch {
            return ImageResponses.error(ServiceError.from(error))
        }
    }

    /// A dialect's URL: its parser makes the request value, then it is answered as `/image` answers.
    private func dialectImage(_ request: ServiceRequest, path: Substring, parser: any URLDialect,
                              span: any Span, logger: Logger) async -> ServiceResponse {
        do {
            let parsed = try parser.request(path: path, query: request.query)
            try service.check(parsed.parameters)
            switch parsed.answer {
            case .image:
                let (image, source) = try await service.image(for: parsed.parameters, accept: request.header("Accept"), logger: logger)
                span.attributes["webimage.served_from"] = source.rawValue
                span.attributes["webimage.output.bytes"] = image.body.count
                var response = ImageResponses.image(image, ifNoneMatch: request.header("If-None-Match"),
                                                    negotiated: Self.variesByAccept(parsed.parameters), maxAge: configuration.cacheControlMaxAge)
                if response.status == 200 {
                    response.headers += parsed.extraHeaders
                    if request.method == "GET" { metrics.sent(bytes: image.body.count) }
                }
                return response
            case .thumborMeta(let meta, let image):
                // The source's header, as `/info` reads it: thumbor's numbers need its size only.
                let info = try await service.info(for: parsed.parameters.url)
                return ImageResponses.json(meta.json(info: info, image: image), maxAge: configuration.cacheControlMaxAge)
            }
        } catch {
            return ImageResponses.error(parser.translate(ServiceError.from(error)))
        }
    }

    /// Whether the answer depends on `Accept` (`Vary: Accept`): `auto` with formats to try
    /// (imgproxy's URLs try none unless `IMGPROXY_ENFORCE_*` says so).
    static func variesByAccept(_ parameters: ImageParameters) -> Bool {
        parameters.format == .auto && parameters.autoFormats?.isEmpty != true
    }

    private func info(_ request: ServiceRequest) async -> ServiceResponse {
        do {
            let url = try service.infoSource(query: request.query)
            let info = try await service.info(for: url)
            return ImageResponses.json(InfoBody(info).json, maxAge: configuration.cacheControlMaxAge)
        } catch {
            return ImageResponses.error(ServiceError.from(error))
        }
    }

    /// Runs `body` in a span named `name`: a child of the task's span when there is one (an
    /// application's tracing middleware), else continuing the trace the request's headers name
    /// (W3C `traceparent`, as the tracer reads it).
    private func traced(_ name: String, _ request: ServiceRequest,
                        _ body: (any Span) async -> ServiceResponse) async -> ServiceResponse {
        var context = ServiceContext.current ?? .topLevel
        if ServiceContext.current == nil { tracer.extract(request, into: &context, using: ServiceRequest.HeaderExtractor()) }
        let span = tracer.startSpan(name, context: context, ofKind: .server)
        defer { span.end() }
        let response = await ServiceContext.withValue(span.context) { await body(span) }
        span.attributes["http.response.status_code"] = response.status
        if response.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        return response
    }
}
