#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOPosix
import WebImage

/// What `GET /image` does between parsing and answering: the output cache, coalescing,
/// admission (backpressure), the source fetch through the SSRF guard, and the render.
final class ImageService: Sendable {
    /// How a request was answered from the service's point of view.
    enum Source: String, Sendable { case memory, disk, render, joined }

    let configuration: ServerConfiguration
    let sourceGuard: SourceGuard
    let metrics: ServiceMetrics
    private let downloader: ImageDownloader
    private let renderer: ImageRenderer
    private let cache: OutputCache
    private let avifEncoderAvailable: Bool
    private let signature: RequestSignature?
    /// Renders in progress by output key: identical requests wait for the same one.
    private let inFlight = Locked([String: Task<RenderedImage, any Error>]())
    /// How many renders are admitted (fetching, queued for a thread, or running).
    private let admitted = Locked(0)

    init(configuration: ServerConfiguration, metrics: ServiceMetrics) throws {
        self.configuration = configuration
        self.metrics = metrics
        let sourceGuard = try SourceGuard(allowPrivateSources: configuration.allowPrivateSources,
                                          allowedSources: configuration.allowedSources)
        self.sourceGuard = sourceGuard
        downloader = ImageDownloader(configuration: ImageDownloaderConfiguration(
            maxConcurrentDownloads: max(1, min(configuration.concurrency, 64)),
            timeout: configuration.sourceTimeout,
            cookiesEnabled: false,
            maxBodySize: configuration.maxSourceBytes,
            resourceTimeout: configuration.sourceTimeout * 4,
            redirectPolicy: { from, to in sourceGuard.allowsRedirect(from: from, to: to) },
            connectAddressPolicy: { host, port, address in sourceGuard.allowsConnection(host: host, port: port, address: address) }
        ))
        let coders = ImageCodersManager.shared
        renderer = ImageRenderer(coders: coders, maxSourcePixels: configuration.maxSourcePixels,
                                 animationByteLimit: 256 << 20)
        avifEncoderAvailable = coders.canEncode(.avif)
        cache = OutputCache(directory: configuration.cacheDirectory.map { URL(fileURLWithPath: $0) },
                            memoryBytes: configuration.memoryCacheBytes)
        signature = configuration.signingKey.map(RequestSignature.init(key:))
    }

    /// Ends the downloader's connections and finishes the disk writes under way.
    func shutdown() async {
        try? await downloader.shutdown()
        await cache.waitForPendingStores()
    }

    /// Checks and parses a raw query.
    /// - Throws: ``ServiceError`` 400 or 403.
    func parameters(query: String) throws -> ImageParameters {
        let parameters = try ImageParameters(query: query)
        if let signature { try signature.verify(query: query, signature: parameters.signature) }
        if let reason = sourceGuard.refusal(for: parameters.url) { throw ServiceError.sourceNotAllowed(reason) }
        return parameters
    }

    /// The output for `parameters` as negotiated with `accept`: from the cache, joined to a
    /// render in progress, or rendered.
    /// - Throws: ``ServiceError``.
    func image(for parameters: ImageParameters, accept: String?, logger: Logger) async throws -> (RenderedImage, Source) {
        let choice = FormatNegotiation.choice(for: parameters.format, accept: accept, avifEncoderAvailable: avifEncoderAvailable)
        let key = "\(parameters.url.absoluteString)\n\(parameters.renderKey)\n\(choice.rawValue)"
        if let hit = await cache.value(forKey: key) {
            metrics.cacheHit(hit.tier)
            return (hit.image, hit.tier == .memory ? .memory : .disk)
        }
        enum Plan { case cached(RenderedImage), join(Task<RenderedImage, any Error>), start(Task<RenderedImage, any Error>), overloaded }
        let plan = inFlight.withLock { running -> Plan in
            if let task = running[key] { return .join(task) }
            // A render that ended since the lookup above stored its output in memory before it
            // left this table: looked up again under the lock, it is not rendered twice.
            if let image = cache.memoryValue(forKey: key) { return .cached(image) }
            let admittedNow = admitted.withLock { count -> Bool in
                guard count < configuration.concurrency else { return false }
                count += 1
                return true
            }
            guard admittedNow else { return .overloaded }
            // Unstructured: a client that goes away does not cancel the render others wait for.
            let task = Task { [self] in
                defer { admitted.withLock { $0 -= 1 } }
                do {
                    let image = try await render(parameters, choice: choice, logger: logger)
                    cache.store(image, forKey: key)
                    inFlight.withLock { $0[key] = nil }
                    return image
                } catch {
                    inFlight.withLock { $0[key] = nil }
                    throw error
                }
            }
            running[key] = task
            return .start(task)
        }
        do {
            switch plan {
            case .cached(let image):
                metrics.cacheHit(.memory)
                return (image, .memory)
            case .overloaded: throw ServiceError.overloaded
            case .join(let task): return (try await task.value, .joined)
            case .start(let task): return (try await task.value, .render)
            }
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// Fetches the source (once: the downloader also coalesces a URL shared by several option
    /// sets) and renders it on NIO's blocking thread pool, off the cooperative threads.
    private func render(_ parameters: ImageParameters, choice: FormatNegotiation.Choice, logger: Logger) async throws -> RenderedImage {
        let start = ContinuousClock.now
        let (data, response) = try await fetch(parameters.url)
        let fetched = ContinuousClock.now
        let validators = Self.validators(of: response, data: data)
        let renderer = renderer
        let image: RenderedImage
        do {
            image = try await NIOThreadPool.singleton.runIfActive {
                try renderer.render(data, sourceValidators: validators, parameters: parameters, choice: choice)
            }
        } catch WebImageError.truncatedData(let reason) {
            // The whole body arrived: an image that ends early is a broken image, not a broken fetch.
            throw ServiceError(status: 415, code: "unsupportedSource", message: "truncated image: \(reason)")
        }
        metrics.rendered()
        logger.debug("rendered", metadata: [
            "source.bytes": "\(data.count)", "output.bytes": "\(image.body.count)", "output.type": "\(image.contentType)",
            "fetch": "\(fetched - start)", "render": "\(ContinuousClock.now - fetched)",
        ])
        return image
    }

    private func fetch(_ url: URL) async throws -> (Data, ImageLoadResponse) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<DownloadOutcome, WebImageError>, Never>) in
            _ = downloader.download(ImageLoadRequest(url: url), options: DownloadOptions(reportsProgress: false),
                                    progress: nil) { continuation.resume(returning: $0) }
        }
        switch result {
        case .success(.data(let data, let response)):
            metrics.sourceFetched(failed: false)
            return (data, response)
        case .success(.notModified):
            // Never asked for: the request carries no validators.
            metrics.sourceFetched(failed: true)
            throw WebImageError.httpStatus(304)
        case .failure(let error):
            metrics.sourceFetched(failed: true)
            throw error
        }
    }

    /// The source's identity for the ETag: its ETag or Last-Modified, else a hash of its bytes.
    static func validators(of response: ImageLoadResponse, data: Data) -> String {
        let validators = response.validators
        if let etag = validators.etag, !etag.hasPrefix("W/") { return "etag:" + etag }
        if let modified = validators.lastModified { return "modified:" + modified + ",length:\(data.count)" }
        return "sha256:" + SHA256.hex(of: data)
    }
}
