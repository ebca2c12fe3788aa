#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the fetch stage produces: the bytes, or the server's word that the stored copy is current.
enum FetchOutput: Sendable {
    case data(Data, ImageLoadResponse)
    case notModified(ImageLoadResponse)
}

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
    /// The loader (the fetch stage), with these validators on the request.
    case network(validators: CacheValidators?)
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

/// The loader side of the pipeline as a graph of shared stages: a source (fetch per URL and
/// request shape, or what a cache held) → decode (per source and decode options) → one stage per
/// transform prefix. Two loads whose keys (``PipelineStageKey``) match share a stage; `[resize]` and
/// `[resize, roundCorners]` share the resize. A stage joins the stage it depends on when it is
/// made, so a load that subscribed shares every stage of its chain that is running then.
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
        let sourceKey: DecodeStageKey.Source
        switch source {
        case .network(let validators):
            sourceKey = .fetch(Self.fetchKey(plan, validators: validators))
        case .cached(let cache, let key, let content):
            let memoryImage = if case .image = content { true } else { false }
            sourceKey = .cache(InstanceIdentity(of: cache), key: key, memoryImage: memoryImage)
        }
        let decodeKey = DecodeStageKey(coders: ObjectIdentifier(plan.coders), options: plan.decodeOptions, source: sourceKey)
        let level = min(max(0, levels ?? plan.transformers.count), plan.transformers.count)
        return imageStage(plan, source: source, decodeKey: decodeKey, level: level, priority: priority)
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
            : .transform(decodeKey, prefix: plan.transformers.prefix(level).map(\.identifier))
        return pool.subscribe(key: key, priority: priority) { [self] (stage: SharedWork<ImageOutput>) in
            if level == 0 { return decodeStage(plan, source: source, sourceKey: decodeKey.source, stage: stage) }
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

    /// Prepares a decode stage: joins its fetch (for a network source) and returns its body.
    private func decodeStage(_ plan: LoadPlan, source: StageSource, sourceKey: DecodeStageKey.Source,
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
        case .network(let validators):
            // The decode key holds its fetch's key (made in `image(for:source:levels:priority:)`).
            let fetchKey = if case .fetch(let key) = sourceKey { key } else { Self.fetchKey(plan, validators: validators) }
            let fetch: SharedWorkSubscription<FetchOutput> = pool.subscribe(key: .fetch(fetchKey), priority: stage.priority) { stage in
                try await Self.fetch(plan, validators: validators, stage: stage)
            }
            stage.onPriorityChange { [processing] priority in
                fetch.setPriority(priority)
                processing.setPriority(priority, ticket: ticket)
            }
            return { [processing] stage in
                let partials = plan.options.contains(.progressiveLoad) ? ProgressivePartials(plan: plan, processing: processing, stage: stage) : nil
                let fetched: FetchOutput
                do {
                    fetched = try await fetch.value { event in
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

    private static func fetch(_ plan: LoadPlan, validators: CacheValidators?, stage: SharedWork<FetchOutput>) async throws -> FetchOutput {
        var request = ImageLoadRequest(url: plan.url, headers: plan.context.headers, priority: stage.priority,
                                       timeout: plan.context.timeout, validators: validators,
                                       wantsPartialData: plan.options.contains(.progressiveLoad))
        if let modifier = plan.context.requestModifier {
            guard let modified = modifier(request) else {
                throw WebImageError.rejected("the request modifier vetoed \(plan.url.absoluteString)")
            }
            request = modified
        }
        let handle = plan.loader.start(request)
        stage.onPriorityChange { handle.setPriority($0) }
        let events = handle.events
        do {
            for try await event in events {
                switch event {
                case .response(let response):
                    if let accept = plan.context.responseModifier, !accept(response) {
                        throw WebImageError.rejected("the response modifier rejected \(response.url.absoluteString)")
                    }
                case .progress(let received, let expected):
                    stage.send(.progress(received: received, expected: expected))
                case .partialData(let data):
                    stage.send(.partialData(data))
                case .completed(let data, let response):
                    return .data(data, response)
                case .notModified(let response):
                    return .notModified(response)
                }
            }
        } catch is CancellationError {
            throw WebImageError.cancelled
        }
        // A loader stream ends without a result only when this stage was cancelled.
        throw WebImageError.cancelled
    }

    /// Loads with the same key share one fetch: the loader, URL and everything that shapes the
    /// request. A load with its own request or response modifier shares with no one.
    static func fetchKey(_ plan: LoadPlan, validators: CacheValidators?) -> FetchStageKey {
        let exclusive = plan.context.requestModifier != nil || plan.context.responseModifier != nil
        return FetchStageKey(loader: InstanceIdentity(of: plan.loader), url: plan.url.absoluteString,
                             headers: plan.context.headers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" },
                             validators: validators, progressive: plan.options.contains(.progressiveLoad),
                             timeout: plan.context.timeout, exclusive: exclusive ? UUID() : nil)
    }
}
