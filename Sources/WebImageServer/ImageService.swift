#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Tracing
import WebImage

/// What `GET /image` does between parsing and answering: the output cache, coalescing,
/// admission (backpressure), the source (kept once fetched, fetched once however many variants
/// ask for it) through the SSRF guard, the memory budget, and the render.
final class ImageService: Sendable {
    /// How a request was answered from the service's point of view.
    enum Source: String, Sendable { case memory, disk, render, joined }

    let configuration: ServerConfiguration
    let sourceGuard: SourceGuard
    let metrics: ServiceMetrics
    private let tracer: any Tracer
    private let downloader: ImageDownloader
    /// S3 reads (and the result store's writes): to the configured endpoint only (exempt from
    /// the private-address guard for these requests alone), no redirect followed.
    private let s3: ImageDownloader
    /// `--result-store`, if set.
    private let resultStore: ResultStore?
    private let renderer: ImageRenderer
    private let cache: OutputCache
    /// The `--auto-formats` candidates this build can encode.
    private let encodable: Set<ImageFormat>
    private let signature: RequestSignature?
    private let presets: ImagePresets
    /// Renders in progress by output key: identical requests join the same one (the library's
    /// shared work, as the manager's stages: it stops when its last waiter leaves).
    private let renders = SharedWorkPool<String>()
    /// How many renders are admitted (fetching, queued for a thread, or running).
    private let admitted = Locked(0)
    /// Source fetches (or disk reads) in progress by URL: every variant of a source joins the same one.
    private let sources = SharedWorkPool<URL>()
    /// The bytes renders may hold at once (the memory budget less the memory cache).
    private let renderMemory: RenderMemoryBudget
    /// `--render-timeout`'s deadlines, one list for every render in flight.
    private let renderTimeouts: FixedDelayTimer
    /// Where what a client is not told goes: the addresses a name resolved to, why a local path was refused.
    private let logger: Logger

    init(configuration: ServerConfiguration, metrics: ServiceMetrics, tracer: any Tracer, logger: Logger) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.tracer = tracer
        self.logger = logger
        let sourceGuard = try SourceGuard(allowPrivateSources: configuration.allowPrivateSources,
                                          privateSourceHosts: configuration.privateSourceHosts,
                                          allowedSourcePrefixes: configuration.allowedSourcePrefixes)
        self.sourceGuard = sourceGuard
        var downloads = ImageDownloaderConfiguration(
            maxConcurrentDownloads: max(1, min(configuration.concurrency, 64)),
            timeout: configuration.sourceTimeout,
            cookiesEnabled: false,
            maxBodySize: configuration.maxSourceBytes,
            resourceTimeout: configuration.sourceTimeout * 4,
            redirectPolicy: { from, to in sourceGuard.allowsRedirect(from: from, to: to) },
            connectAddressPolicy: { host, port, address in sourceGuard.allowsConnection(host: host, port: port, address: address) }
        )
        downloads.localRoot = configuration.localRoot
        downloader = ImageDownloader(configuration: downloads)
        let s3Configuration = S3Configuration(endpoint: configuration.s3Endpoint.flatMap(URL.init(string:)),
                                              region: configuration.s3Region, credentials: configuration.s3Credentials)
        let endpointGuard = try SourceGuard(allowPrivateSources: configuration.allowPrivateSources,
                                            privateSourceHosts: s3Configuration.endpointHost.map { [$0] } ?? [])
        var s3Downloads = downloads
        s3Downloads.localRoot = nil
        s3Downloads.s3 = s3Configuration
        s3Downloads.redirectPolicy = { _, _ in false }
        s3Downloads.connectAddressPolicy = { host, port, address in endpointGuard.allowsConnection(host: host, port: port, address: address) }
        let s3 = ImageDownloader(configuration: s3Downloads)
        self.s3 = s3
        resultStore = try configuration.resultStore.map { try ResultStore(location: $0, downloader: s3, logger: logger) }
        let coders = ImageCodersManager.shared
        renderer = ImageRenderer(coders: coders, maxSourcePixels: configuration.maxSourcePixels,
                                 animationByteLimit: configuration.animationByteLimit,
                                 settings: try RenderSettings(configuration, coders: coders), limits: RenderLimits(configuration))
        renderMemory = RenderMemoryBudget(capacity: configuration.renderBudgetBytes)
        renderTimeouts = FixedDelayTimer(delay: configuration.renderTimeout)
        encodable = Set(FormatNegotiation.autoFormatCandidates.filter { coders.canEncode($0) })
        cache = OutputCache(directory: configuration.cacheDirectory.map { URL(fileURLWithPath: $0) },
                            memoryBytes: configuration.memoryCacheBytes)
        signature = configuration.signingKeys.isEmpty ? nil : RequestSignature(keys: configuration.signingKeys)
        presets = try ImagePresets(configuration.presets)
    }

    /// Finishes the disk and result-store writes under way, then ends the downloaders' connections.
    func shutdown() async {
        await cache.waitForPendingStores()
        await resultStore?.waitForPendingStores()
        try? await downloader.shutdown()
        try? await s3.shutdown()
    }

    /// Checks and parses a raw query: the signature covers the query as sent, presets and all.
    /// - Throws: ``ServiceError`` 400 or 403.
    func parameters(query: String) throws -> ImageParameters {
        let parameters = try ImageParameters(query: query, presets: presets, presetsOnly: configuration.presetsOnly)
        if let signature {
            try signature.verify(query: query, signature: parameters.signature, endpoint: .image,
                                 acceptsQueryOnly: configuration.signatureMigration)
        }
        try check(parameters)
        return parameters
    }

    /// The checks every request value passes after its parse and signature, whichever grammar
    /// it came in (`/image`'s query, a dialect's path): the watermark exists, the source passes
    /// ``checkSource(_:)``.
    /// - Throws: ``ServiceError`` 400 or 403.
    func check(_ parameters: ImageParameters) throws {
        if parameters.watermark != nil, configuration.watermarkFile == nil {
            throw ServiceError.badParameter("'wm' needs a watermark: this service has no --watermark")
        }
        try checkSource(parameters.url)
        if let overlay = parameters.overlay { try checkSource(overlay.url) }
    }

    /// The rules every source passes before it is fetched, for `/image` and `/info` alike: a
    /// local source needs `--local-root` and a path that stays inside it as written (a path
    /// whose resolution leads out is told apart from a missing file by nobody: both are 404);
    /// the allowed-source list and the private-address guard; an S3 URL names an object.
    /// - Throws: ``ServiceError`` 400 or 403.
    private func checkSource(_ url: URL) throws {
        if LocalRoot.isLocal(url) {
            guard configuration.localRoot != nil else {
                throw ServiceError.sourceNotAllowed("local sources are not served: no --local-root")
            }
            do { _ = try LocalRoot.segments(of: url) } catch { throw ServiceError.from(error) }
        }
        if let reason = sourceGuard.refusal(for: url) { throw ServiceError.sourceNotAllowed(reason) }
        if S3Configuration.isS3(url) {
            do { _ = try S3Configuration.object(of: url) } catch { throw ServiceError.badParameter("\(error)") }
        }
    }

    /// Checks and parses the query of `GET /info`: `url` and, with signing keys, `sig` (over the
    /// query as sent); the source passes the same rules as for `/image`.
    /// - Throws: ``ServiceError`` 400 or 403.
    func infoSource(query: String) throws -> URL {
        if let name = ImageParameters.pairs(of: query).map(\.0).first(where: { !["url", "sig"].contains($0) }) {
            throw ServiceError.badParameter("unknown parameter '\(name)': /info takes url and sig")
        }
        let parameters = try ImageParameters(query: query)
        if let signature {
            try signature.verify(query: query, signature: parameters.signature, endpoint: .info,
                                 acceptsQueryOnly: configuration.signatureMigration)
        }
        try checkSource(parameters.url)
        return parameters.url
    }

    /// What the source behind `url` says about itself, from its header (``ImageInfo``): the
    /// source is fetched (or taken from the source cache) as for a render, never decoded.
    /// - Throws: ``ServiceError``.
    func info(for url: URL) async throws -> ImageInfo {
        // Admitted as renders are: a flood of `/info` for distinct sources queues no more fetches than `--concurrency`.
        guard admit() else { throw ServiceError.overloaded }
        defer { admitted.withLock { $0 -= 1 } }
        let source = try await source(for: url)
        do {
            return try ImageInfo.read(from: source.data)
        } catch WebImageError.truncatedData(let reason) {
            throw ServiceError(status: 415, code: "unsupportedSource", message: "truncated image: \(reason)")
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// The output for `parameters` as negotiated with `accept`: from the cache, joined to a
    /// render in progress, or rendered.
    /// - Throws: ``ServiceError``.
    func image(for parameters: ImageParameters, accept: String?, logger: Logger) async throws -> (RenderedImage, Source) {
        let choice = FormatNegotiation.choice(for: parameters.format, accept: accept, autoFormats: parameters.autoFormats ?? configuration.autoFormats,
                                              canEncode: encodable.contains)
        let key = renderer.outputKey(parameters, choice: choice)
        if let hit = await cache.value(forKey: key) {
            metrics.cacheHit(hit.tier)
            return (hit.image, hit.tier == .memory ? .memory : .disk)
        }
        var isNew = false
        let context = ServiceContext.current
        let subscription = renders.subscribe(key: key, priority: .normal) { (_: SharedWork<Rendered>) in
            isNew = true
            // Admitted when the render is made: callers that join it take no slot of their own.
            let admittedNow = admit()
            return { [self] work in
                guard admittedNow else { throw ServiceError.overloaded }
                defer { admitted.withLock { $0 -= 1 } }
                // A render that ended since the caller's lookup stored its output in memory
                // before it left the pool: it is not rendered twice.
                if let image = cache.memoryValue(forKey: key) { return Rendered(image: image, fromMemory: true) }
                // The work runs as a task of its own: the request's trace goes with it.
                return try await ServiceContext.withValue(context) { [self] in
                    let image: RenderedImage
                    if let stored = await resultStore?.value(forKey: key) {
                        // Another instance (or this one before a restart) rendered it.
                        metrics.cacheHit(.store)
                        image = stored
                    } else {
                        image = try await withRenderTimeout(of: work) { [self] in try await render(parameters, choice: choice, logger: logger) }
                        resultStore?.store(image, forKey: key)
                    }
                    cache.store(image, forKey: key)
                    return Rendered(image: image, fromMemory: false)
                }
            }
        }
        do {
            let rendered = try await subscription.value()
            if rendered.fromMemory {
                metrics.cacheHit(.memory)
                return (rendered.image, .memory)
            }
            return (rendered.image, isNew ? .render : .joined)
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// A render's output, and whether a render that had just ended left it in memory.
    private struct Rendered: Sendable {
        let image: RenderedImage
        let fromMemory: Bool
    }

    /// Gets the source (kept, or fetched once for all its variants), waits until its estimate
    /// fits in the memory budget, and renders it in a slot of the process's CPU budget (``WorkQueue/cpu``), off the cooperative threads.
    private func render(_ parameters: ImageParameters, choice: FormatNegotiation.Choice, logger: Logger) async throws -> RenderedImage {
        let start = ContinuousClock.now
        let source = try await source(for: parameters.url)
        // A second image (thumbor's watermark) comes the same way: checked, cached, coalesced.
        let mark: Data? = if let overlay = parameters.overlay { try await self.source(for: overlay.url).data } else { nil }
        let fetched = ContinuousClock.now
        // The limits, from the header, before any memory is taken: 413 or 422.
        let frames = try renderer.limits.check(source.data, parameters: parameters, choice: choice)
        // A header whose size cannot be read takes the whole budget, and a pixel limit that keeps it within.
        let estimate = RenderEstimate.bytes(source: source.data, parameters: parameters, choice: choice,
                                            animationByteLimit: configuration.animationByteLimit, frames: frames)
        let renderer = estimate != nil ? self.renderer : ImageRenderer(
            coders: self.renderer.coders, maxSourcePixels: min(self.renderer.maxSourcePixels, renderMemory.capacity / 10),
            animationByteLimit: self.renderer.animationByteLimit, settings: self.renderer.settings, limits: self.renderer.limits)
        let reserved = estimate ?? renderMemory.capacity
        try await renderMemory.acquire(reserved)
        defer { renderMemory.release(reserved) }
        // Timed out while it waited for the budget: the budget goes back before any work.
        try Task.checkCancellation()
        let admitted = ContinuousClock.now
        let image: RenderedImage
        do {
            // A slot of the process's CPU budget, as the library's decodes take: renders and
            // loads in one process never run more CPU work than cores.
            let cancellation = DecodeCancellation()
            let stages = RenderStages(tracer: tracer, context: ServiceContext.current ?? .topLevel, cancellation: cancellation)
            image = try await withTaskCancellationHandler {
                try await WorkQueue.cpu.perform(ticket: WorkQueue.cpu.makeTicket(), priority: .normal) {
                    [source] in
                    try renderer.render(source.data, sourceValidators: source.validators, parameters: parameters, choice: choice,
                                        stages: stages, overlay: mark)
                }
            } onCancel: {
                cancellation.cancel()
            }
        } catch WebImageError.truncatedData(let reason) {
            // The whole body arrived: an image that ends early is a broken image, not a broken fetch.
            throw ServiceError(status: 415, code: "unsupportedSource", message: "truncated image: \(reason)")
        }
        metrics.rendered()
        logger.debug("rendered", metadata: [
            "source.bytes": "\(source.data.count)", "output.bytes": "\(image.body.count)", "output.type": "\(image.contentType)",
            "estimate.bytes": "\(reserved)", "fetch": "\(fetched - start)", "budget.wait": "\(admitted - fetched)",
            "render": "\(ContinuousClock.now - admitted)",
        ])
        return image
    }

    /// The source behind `url`: kept in the cache (memory, then disk), else fetched and kept
    /// (unless the origin said `no-store`). Concurrent callers share one lookup and fetch; a
    /// fetch that ended since the caller's lookup left its source in memory before it left the
    /// pool, so a source is fetched at most once while it stays cached.
    private func source(for url: URL) async throws -> SourceImage {
        if let source = cache.memorySource(for: url) { return source }
        let context = ServiceContext.current
        let subscription = sources.subscribe(key: url, priority: .normal) { [self] (_: SharedWork<SourceImage>) in
            if let source = cache.memorySource(for: url) { return source }
            if let hit = await cache.source(for: url) { return hit.source }
            let (data, response) = try await ServiceContext.withValue(context) { [self] in try await fetch(url) }
            let source = SourceImage(data: data, response: response, url: url)
            if SourceImage.mayStore(response) { cache.storeSource(source, for: url) }
            return source
        }
        return try await subscription.value()
    }

    private func fetch(_ url: URL) async throws -> (Data, ImageLoadResponse) {
        let isS3 = S3Configuration.isS3(url)
        let span = tracer.startSpan("fetch source", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        span.attributes["url.scheme"] = url.scheme ?? ""
        // The source request continues the trace (`traceparent`, as the tracer writes it).
        var headers: [String: String] = [:]
        tracer.inject(span.context, into: &headers, using: DictionaryInjector())
        // A fetch whose last render left (its clients gone, or timed out) stops: the download's
        // completion then runs with `cancelled`.
        let token = Locked<ImageDownloader.Token?>(nil)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DownloadOutcome, WebImageError>, Never>) in
                let started = (isS3 ? s3 : downloader).download(ImageLoadRequest(url: url, headers: headers),
                                                                options: DownloadOptions(reportsProgress: false),
                                                                progress: nil) { continuation.resume(returning: $0) }
                token.withLock { $0 = started }
                if Task.isCancelled { started.cancel() }
            }
        } onCancel: {
            token.withLock { $0 }?.cancel()
        }
        switch result {
        case .success(.data(let data, _)): span.attributes["webimage.source.bytes"] = data.count
        case .failure(let error):
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        case .success(.notModified): break
        }
        switch result {
        case .success(.data(let data, let response)):
            metrics.sourceFetched(failed: false)
            return (data, response)
        case .success(.notModified):
            // Never asked for: the request carries no validators.
            metrics.sourceFetched(failed: true)
            throw WebImageError.httpStatus(304)
        case .failure(.fileSystem(let reason)) where LocalRoot.isLocal(url), .failure(.rejected(let reason)) where LocalRoot.isLocal(url):
            // Missing, not a regular file, unreadable, or a link that leads out of the root (the
            // path as written passed ``checkSource(_:)``): one answer for all, as an origin's 404,
            // so that the answer says nothing of what lies outside the root. The reason is logged.
            metrics.sourceFetched(failed: true)
            logger.info("local source not served", metadata: ["url": "\(url.absoluteString)", "reason": "\(reason)"])
            throw ServiceError(status: 404, code: "sourceNotFound", message: "no readable file at \(url.path(percentEncoded: true))")
        case .failure(.rejected(let reason)):
            // The connect-address policy names the addresses a name resolved to (internal DNS
            // answers), the redirect policy the hop: logged, not told.
            metrics.sourceFetched(failed: true)
            logger.info("source refused", metadata: ["url": "\(SourceAllowList.redacted(url))", "reason": "\(reason)"])
            throw ServiceError.sourceNotAllowed(Self.refusedSourceReason)
        case .failure(.httpStatus(let status)) where isS3 && (status == 401 || status == 403):
            metrics.sourceFetched(failed: true)
            throw ServiceError(status: 502, code: "sourceFailed",
                               message: "the S3 store refused the read (\(status): AccessDenied, or the credentials or region are wrong)")
        case .failure(let error):
            metrics.sourceFetched(failed: true)
            throw error
        }
    }

    /// What a client is told when the guard refused a source's address or a redirect hop at fetch time.
    static let refusedSourceReason = "the source, or a redirect from it, leads to an address or place this service may not fetch"
        + " (private, loopback, link-local or reserved; or off the allowed-source list)"

    /// Takes one of `--concurrency`'s slots, if one is free (the caller gives it back).
    private func admit() -> Bool {
        admitted.withLock { count -> Bool in
            guard count < configuration.concurrency else { return false }
            count += 1
            return true
        }
    }

    /// Runs `render` with `--render-timeout`: past it, the waiters of `work` get 503
    /// `renderTimedOut` at once, and the render is cancelled (a render waiting for the memory
    /// budget gives it back without starting; one already on a thread stops at its next step or
    /// band of rows or frame (``RenderStages``), then its budget is freed). An output that ends after the timeout is not kept.
    private func withRenderTimeout(of work: SharedWork<Rendered>,
                                   _ render: () async throws -> RenderedImage) async throws -> RenderedImage {
        let timeout = renderTimeouts.add { [metrics, limit = renderTimeouts.delay] in
            // Counted before the waiters hear of it, so a client that reads /metrics next sees it.
            metrics.renderTimedOut()
            work.abandon(with: ServiceError(status: 503, code: "renderTimedOut",
                                            message: "the render took longer than \(limit) (--render-timeout)"))
        }
        defer { renderTimeouts.remove(timeout) }
        let image = try await render()
        try Task.checkCancellation()
        return image
    }
}

/// Writes a trace context into request headers for the tracer.
private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
