#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Tracing
import WebImage

/// What `GET /image` and `GET /info` do between parsing and answering: the checks a request
/// passes, then the library's pipeline (``/WebImage/ImageManager/encodedImage(for:)``), which
/// does the rest: the output tier (memory, `--cache-dir`, the `--result-store`), one render per
/// output however many requests ask, one fetch per source however many outputs need it,
/// admission (`--concurrency`), the render memory budget and `--render-timeout`.
final class ImageService: Sendable {
    /// How a request was answered from the service's point of view.
    enum Source: String, Sendable { case memory, disk, render, joined }

    let configuration: ServerConfiguration
    let sourceGuard: SourceGuard
    let metrics: ServiceMetrics
    /// The pipeline every request goes through.
    let manager: ImageManager
    private let tracer: any Tracer
    /// Every fetch, S3's too: the downloader gives `s3://` reads and the result store's writes
    /// their own connections and trust (the endpoint, past the private-address guard; no redirect).
    private let downloader: ImageDownloader
    private let renderer: ImageRenderer
    /// The `--auto-formats` candidates this build can encode.
    private let encodable: Set<ImageFormat>
    private let signature: RequestSignature?
    private let presets: ImagePresets
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
        downloads.s3 = S3Configuration(endpoint: configuration.s3Endpoint.flatMap(URL.init(string:)),
                                       region: configuration.s3Region, credentials: configuration.s3Credentials)
        let downloader = ImageDownloader(configuration: downloads)
        self.downloader = downloader
        let resultStore = try configuration.resultStore.map { try ResultStore(location: $0, downloader: downloader, logger: logger) }
        let coders = ImageCodersManager.shared
        renderer = ImageRenderer(coders: coders, maxSourcePixels: configuration.maxSourcePixels,
                                 animationByteLimit: configuration.animationByteLimit,
                                 settings: try RenderSettings(configuration, coders: coders), limits: RenderLimits(configuration))
        encodable = Set(FormatNegotiation.autoFormatCandidates.filter { coders.canEncode($0) })
        let limits = ImageManagerConfiguration.EncodeStageLimits(
            maxAdmitted: configuration.concurrency, memoryBudget: configuration.renderBudgetBytes,
            deadline: configuration.renderTimeout, onDeadline: { metrics.renderTimedOut() })
        manager = ImageManager(
            dataCache: ImageDataCache(memoryBytes: configuration.memoryCacheBytes,
                                      directory: configuration.cacheDirectory.map { URL(fileURLWithPath: $0) }),
            remoteStore: resultStore, loader: downloader, coders: coders,
            configuration: ImageManagerConfiguration(parallelDecoding: false, encodeStage: limits))
        signature = configuration.signingKeys.isEmpty ? nil : RequestSignature(keys: configuration.signingKeys)
        presets = try ImagePresets(configuration.presets)
    }

    /// Finishes the disk and result-store writes under way, then ends the downloaders' connections.
    func shutdown() async {
        await manager.waitForPendingStores()
        try? await downloader.shutdown()
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
    /// source is fetched (or taken from the data tier) as for a render, never decoded; admitted
    /// as renders are, so a flood of `/info` for distinct sources queues no more fetches than `--concurrency`.
    /// - Throws: ``ServiceError``.
    func info(for url: URL) async throws -> ImageInfo {
        let source: SourceImage
        do {
            source = try await manager.sourceImage(for: request(for: url))
        } catch {
            throw ServiceError.from(error)
        }
        do {
            return try ImageInfo.read(from: source.data)
        } catch {
            throw ServiceError.fromSourceBytes(error)
        }
    }

    /// The output for `parameters` as negotiated with `accept`: from the output tier, joined to
    /// a render in progress, or rendered.
    /// - Throws: ``ServiceError``.
    func image(for parameters: ImageParameters, accept: String?, logger: Logger) async throws -> (EncodedImage, Source) {
        let choice = FormatNegotiation.choice(for: parameters.format, accept: accept, autoFormats: parameters.autoFormats ?? configuration.autoFormats,
                                              canEncode: encodable.contains)
        let context = ServiceContext.current ?? .topLevel
        let rendering = ServiceRendering(renderer: renderer, parameters: parameters, choice: choice,
                                         additionalSources: parameters.overlay.map { [request(for: $0.url)] } ?? [],
                                         tracer: tracer, context: context, metrics: metrics, logger: logger)
        var load = request(for: parameters.url)
        load.rendering = rendering
        let result: ImageManager.EncodedResult
        do {
            result = try await manager.encodedImage(for: load)
        } catch {
            throw ServiceError.from(error)
        }
        switch result.origin {
        case .memory:
            metrics.cacheHit(.memory)
            return (result.image, .memory)
        case .disk:
            metrics.cacheHit(.disk)
            return (result.image, .disk)
        case .remote:
            // Another instance (or this one before a restart) rendered it.
            metrics.cacheHit(.store)
            return (result.image, .render)
        case .rendered:
            return (result.image, .render)
        case .joined:
            return (result.image, .joined)
        }
    }

    /// The manager's request for the source at `url`: the fetch traced and its failures answered
    /// as ``ServiceSourceFetch`` says.
    private func request(for url: URL) -> ImageRequest {
        ImageRequest(url: url, sourceFetch: ServiceSourceFetch(tracer: tracer, context: ServiceContext.current ?? .topLevel,
                                                               metrics: metrics, logger: logger))
    }
}
