#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the decode and transform stages produce.
enum ImageOutput: Sendable {
    /// An image decoded from fetched bytes (and transformed), with those bytes and their response.
    case image(DecodedImage, Data, ImageLoadResponse)
    /// An image made from what a cache held (and transformed).
    case cachedImage(DecodedImage)
    /// The server confirmed the stored copy.
    case notModified(ImageLoadResponse)

    var image: DecodedImage? {
        switch self {
        case .image(let image, _, _), .cachedImage(let image): image
        case .notModified: nil
        }
    }

    /// The same output with `image` in place of its image.
    func replacingImage(with image: DecodedImage) -> ImageOutput {
        switch self {
        case .image(_, let data, let response): .image(image, data, response)
        case .cachedImage: .cachedImage(image)
        case .notModified: self
        }
    }
}

/// Where the decode stage's input comes from.
enum StageSource: Sendable {
    /// A download of `downloader`, which the decode stage joins as its caller.
    case download(PreparedDownload, ImageDownloader)
    /// What `cache` held under `key`: its bytes, decoded here, or its memory image, made what a
    /// decode with the load's options makes.
    case cached(any ImageCaching, key: String, CachedContent)
}

/// A cache's answer the decode stage starts from.
enum CachedContent: Sendable {
    case bytes(Data)
    case image(DecodedImage)
}

/// The decode stage's error for cached bytes that no longer decode: the caller drops the entry
/// and treats the query as a miss.
struct UndecodableCachedBytes: Error {}

/// The loader side of the pipeline as a graph of shared stages: a source (a download of the
/// downloader, or what a cache held) → decode (per source and decode options) → one stage per
/// transform prefix. Two loads whose keys (``PipelineStageKey``) match share a stage; `[resize]`
/// and `[resize, roundCorners]` share the resize. A stage joins the stage it depends on when it
/// is made, so a load that subscribed shares every stage of its chain that is running then.
///
/// Bytes are coalesced once, by the downloader: a decode stage is a caller of the download
/// (the downloader's `subscribe(_:priority:accepts:)`), which a direct
/// ``ImageDownloader/download(_:options:)`` of the same request joins too.
///
/// Every decode (from the network or a cache's bytes) and every transform runs in
/// ``processing``, the manager's own limit within the process's CPU budget (``WorkQueue/cpu``),
/// at the highest priority among the loads waiting for it.
final class PipelineStages: Sendable {
    let pool = SharedWorkPool<PipelineStageKey>()
    let processing: WorkQueue

    init(processingConcurrency: Int) {
        // The manager's own limit, within the process's one CPU budget.
        processing = WorkQueue(width: processingConcurrency, within: .cpu)
    }

    /// Subscribes to the stage `levels` transforms deep (by default the last one) of `plan`'s
    /// chain from `source`, starting or joining every stage before it.
    func image(for plan: LoadPlan, source: StageSource, levels: Int? = nil, priority: LoadPriority) -> SharedWorkSubscription<ImageOutput> {
        let level = min(max(0, levels ?? plan.transformers.count), plan.transformers.count)
        return imageStage(plan, source: source, decodeKey: Self.decodeKey(plan, source: source), level: level, priority: priority)
    }

    /// The decode stage's key for `plan` from `source`.
    static func decodeKey(_ plan: LoadPlan, source: StageSource) -> DecodeStageKey {
        let key: DecodeStageKey.Source, progressive: Bool
        switch source {
        case .download(let download, let downloader):
            // A load that screens the response decodes alone: its rejection is its own.
            key = .download(downloader: ObjectIdentifier(downloader), key: download.key,
                            exclusive: plan.context.responseModifier == nil ? nil : UUID())
            progressive = plan.options.contains(.progressiveLoad)
        case .cached(let cache, let cacheKey, let content):
            let memoryImage = if case .image = content { true } else { false }
            key = .cache(InstanceIdentity(of: cache), key: cacheKey, memoryImage: memoryImage)
            progressive = false
        }
        return DecodeStageKey(coders: ObjectIdentifier(plan.coders), options: plan.decodeOptions, progressive: progressive, source: key)
    }

    /// Applies one transformer as SDWebImage does: animated images only with
    /// ``ImageLoadOptions/transformAnimatedImage``.
    static func apply(_ transformer: any ImageTransformer, to image: DecodedImage, options: ImageLoadOptions) throws -> DecodedImage {
        if image.isAnimated, !options.contains(.transformAnimatedImage) { return image }
        return try image.applying(transformer)
    }

    /// Makes a memory image (the full-size original) what a decode with `options` makes.
    static func adapt(_ original: DecodedImage, to options: DecodeOptions) throws -> DecodedImage {
        var image = original
        if options.firstFrameOnly, image.isAnimated { image = image.firstFrameOnly }
        if let side = options.maxPixelSize, max(image.width, image.height) > side {
            image = try image.applying(ResizeTransformer(width: side, height: side, mode: .fit))
        }
        return image
    }

    /// Whether ``adapt(_:to:)`` would change `image`.
    static func needsAdapting(_ image: DecodedImage, to options: DecodeOptions) -> Bool {
        (options.firstFrameOnly && image.isAnimated) || options.maxPixelSize.map { max(image.width, image.height) > $0 } ?? false
    }

    // MARK: Stages

    private func imageStage(_ plan: LoadPlan, source: StageSource, decodeKey: DecodeStageKey, level: Int,
                            priority: LoadPriority) -> SharedWorkSubscription<ImageOutput> {
        let key: PipelineStageKey = level == 0 ? .decode(decodeKey)
            : .transform(TransformStageKey(decode: decodeKey, steps: plan.transformers.prefix(level)))
        return pool.subscribe(key: key, priority: priority) { [self] (stage: SharedWork<ImageOutput>) in
            if level == 0 { return decodeStage(plan, source: source, stage: stage) }
            let upstream = imageStage(plan, source: source, decodeKey: decodeKey, level: level - 1, priority: stage.priority)
            let ticket = processing.makeTicket()
            stage.onPriorityChange { [processing] priority in
                upstream.setPriority(priority)
                processing.setPriority(priority, ticket: ticket)
            }
            let transformer = plan.transformers[level - 1], options = plan.options
            return { [processing] stage in
                let input = try await upstream.value(forwarding: stage.send)
                guard let image = input.image else { return input }
                let output = try await processing.perform(ticket: ticket, priority: stage.priority) {
                    try Self.apply(transformer, to: image, options: options)
                }
                return input.replacingImage(with: output)
            }
        }
    }

    /// Prepares a decode stage: joins its download (for a download source) and returns its body.
    private func decodeStage(_ plan: LoadPlan, source: StageSource,
                             stage: SharedWork<ImageOutput>) -> @Sendable (SharedWork<ImageOutput>) async throws -> ImageOutput {
        let ticket = processing.makeTicket()
        let coders = plan.coders, options = plan.decodeOptions
        switch source {
        case .cached(_, _, let content):
            stage.onPriorityChange { [processing] priority in processing.setPriority(priority, ticket: ticket) }
            return { [processing] stage in
                if case .image(let image) = content, !Self.needsAdapting(image, to: options) { return .cachedImage(image) }
                return .cachedImage(try await processing.perform(ticket: ticket, priority: stage.priority) {
                    switch content {
                    case .bytes(let data):
                        guard let image = try? coders.decodeForDisplay(data, options: options) else { throw UndecodableCachedBytes() }
                        return image
                    case .image(let image):
                        return try Self.adapt(image, to: options)
                    }
                })
            }
        case .download(let download, let downloader):
            // The stage is the download's caller: the downloader queues, coalesces and stops it.
            let bytes = downloader.subscribe(download, priority: stage.priority, accepts: plan.context.responseModifier)
            stage.onPriorityChange { [processing] priority in
                bytes.setPriority(priority)
                processing.setPriority(priority, ticket: ticket)
            }
            return { [processing] stage in
                let partials = plan.options.contains(.progressiveLoad) ? ProgressivePartials(plan: plan, processing: processing, stage: stage) : nil
                let fetched: DownloadOutcome
                do {
                    fetched = try await bytes.value { event in
                        switch event {
                        case .progress(let received, let expected):
                            stage.send(.progress(received: received, expected: expected))
                        case .partialData(let data):
                            partials?.offer(data)
                        default:
                            break
                        }
                    }
                } catch {
                    partials?.stop()
                    throw error
                }
                // No partial image after the final one, and none decoding while it is made.
                await partials?.finish()
                switch fetched {
                case .notModified(let response):
                    return .notModified(response)
                case .data(let data, let response):
                    let image = try await processing.perform(ticket: ticket, priority: stage.priority) {
                        try coders.decodeForDisplay(data, options: options)
                    }
                    return .image(image, data, response)
                }
            }
        }
    }
}
