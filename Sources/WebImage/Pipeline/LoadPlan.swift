#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything one load decides before doing any work: which parts it uses, its cache keys, how it
/// decodes, which transforms it runs.
struct LoadPlan: Sendable {
    let url: URL
    let options: ImageLoadOptions
    let context: ImageLoadContext
    let priority: LoadPriority
    let cache: (any ImageCaching)?
    let loader: any ImageLoader
    /// The downloader whose queue and coalescing the load's bytes go through: ``loader`` itself,
    /// or the manager's (``ImageManager/downloader``) with ``loader`` as its transport.
    let downloader: ImageDownloader
    /// ``loader`` when it is not a downloader: the custom loader the download runs through.
    let transport: (any ImageLoader)?
    let coders: ImageCodersManager
    /// The key of the original bytes on disk; `nil` when this load is not cached.
    let sourceKey: String?
    /// The key of the delivered image: the source key plus thumbnail, first-frame and transform suffixes.
    let finalKey: String?
    let decodeOptions: DecodeOptions
    /// The transform steps, pipelines flattened, so every prefix is a shareable stage.
    let transformers: [any ImageTransformer]

    init(url: URL, options: ImageLoadOptions, context: ImageLoadContext, manager: ImageManager) {
        self.init(ImageRequest(url: url, options: options, context: context), manager: manager)
    }

    init(_ request: ImageRequest, manager: ImageManager) {
        url = request.url
        options = request.options
        let context = request.context
        self.context = context
        priority = request.priority
        cache = context.cache ?? manager.cache
        let loader = context.loader ?? manager.loader
        self.loader = loader
        if let own = loader as? ImageDownloader {
            downloader = own
            transport = nil
        } else {
            downloader = manager.downloader
            transport = loader
        }
        coders = context.coders ?? manager.coders
        var decodeOptions = DecodeOptions(maxPixelSize: context.maxPixelSize,
                                          firstFrameOnly: options.contains(.decodeFirstFrameOnly),
                                          parallelDecoding: manager.configuration.parallelDecoding)
        if options.contains(.scaleDownLargeImages) {
            decodeOptions.scaleDownLargeImages = true
            decodeOptions.pixelLimit = manager.configuration.scaleDownPixelLimit
        }
        self.decodeOptions = decodeOptions
        if let pipeline = context.transformer as? PipelineTransformer {
            transformers = pipeline.transformers
        } else {
            transformers = context.transformer.map { [$0] } ?? []
        }
        let filter = context.cacheKeyFilter ?? manager.configuration.cacheKeyFilter
        let sourceKey = filter.map { $0(request.url) } ?? request.url.absoluteString
        let transformers = self.transformers
        self.sourceKey = sourceKey
        finalKey = sourceKey.map { Self.finalKey(source: $0, decodeOptions: decodeOptions, transformers: transformers) }
    }

    /// The key of an image decoded from the bytes under `source` with `decodeOptions` and then
    /// transformed: a thumbnail or a first frame is a different image from the original, so it
    /// gets a key of its own (as SDWebImage's thumbnail keys do).
    static func finalKey(source: String, decodeOptions: DecodeOptions, transformers: [any ImageTransformer]) -> String {
        var key = source
        if let maxPixelSize = decodeOptions.maxPixelSize { key += "-thumbnail(\(maxPixelSize))" }
        if decodeOptions.firstFrameOnly { key += "-firstFrame" }
        if !transformers.isEmpty { key = PipelineTransformer(transformers).cacheKey(for: key) }
        return key
    }

    /// The request for the load's bytes as the downloader sends it: the context's headers,
    /// timeout and request modifier (which runs first, as the load's own), `validators` of a
    /// stored copy, partial data for a progressive load.
    /// - Throws: ``WebImageError/rejected(_:)`` when a request modifier vetoes it, or the error
    ///   the downloader refuses it with.
    func download(validators: HTTPLoadRequest.Validators?, priority: LoadPriority, headers extraHeaders: [String: String] = [:]) throws -> PreparedDownload {
        let headers = context.headers.merging(extraHeaders) { _, extra in extra }
        var request = ImageLoadRequest(url: url, headers: headers, priority: priority, timeout: context.timeout,
                                       validators: validators, wantsPartialData: options.contains(.progressiveLoad))
        if let modifier = context.requestModifier {
            guard let modified = modifier(request) else { throw WebImageError.rejected("the request modifier vetoed \(url.absoluteString)") }
            request = modified
        }
        return try downloader.prepare(request, modifier: nil, transport: transport).mapError(\.error).get()
    }

    /// Whether the delivered image is the decoded original, stored under the source key.
    var deliversOriginal: Bool { finalKey == sourceKey }

    /// The effective download-gate hook.
    func shouldDownload(_ manager: ImageManager) -> ShouldDownloadHook? {
        context.shouldDownload ?? manager.configuration.shouldDownload
    }
}
