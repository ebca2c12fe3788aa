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

/// What the decode and transform stages produce: the image with the bytes it came from.
enum ImageOutput: Sendable {
    case image(DecodedImage, Data, ImageLoadResponse)
    case notModified(ImageLoadResponse)
}

/// The loader side of the pipeline as a graph of shared stages: fetch (per URL and request
/// shape) → decode (per fetch and decode options) → one stage per transform prefix. Two loads
/// whose keys match share a stage; `[resize]` and `[resize, roundCorners]` share the resize.
final class PipelineStages: Sendable {
    let pool = SharedWorkPool<String>()
    let processing: WorkQueue

    init(processingConcurrency: Int) {
        // The manager's own limit, within the process's one CPU budget.
        processing = WorkQueue(width: processingConcurrency, within: .cpu)
    }

    /// Subscribes to the last stage of `plan`'s chain (starting or joining every stage before it).
    func image(for plan: LoadPlan, validators: CacheValidators?, priority: LoadPriority) -> SharedWorkSubscription<ImageOutput> {
        let fetchKey = Self.fetchKey(plan, validators: validators)
        return imageStage(plan, validators: validators, fetchKey: fetchKey, level: plan.transformers.count, priority: priority)
    }

    /// Applies one transformer as SDWebImage does: animated images only with
    /// ``ImageLoadOptions/transformAnimatedImage``.
    static func apply(_ transformer: any ImageTransformer, to image: DecodedImage, options: ImageLoadOptions) throws -> DecodedImage {
        if image.isAnimated, !options.contains(.transformAnimatedImage) { return image }
        return try transformer.transform(image)
    }

    // MARK: Stages

    private func imageStage(_ plan: LoadPlan, validators: CacheValidators?, fetchKey: String, level: Int,
                            priority: LoadPriority) -> SharedWorkSubscription<ImageOutput> {
        let decodeKey = "decode|\(UInt(bitPattern: ObjectIdentifier(plan.coders)))|\(plan.decodeOptions.stageKey)|\(fetchKey)"
        let key = level == 0 ? decodeKey : plan.transformers.prefix(level).map(\.identifier).joined(separator: "|") + "|" + decodeKey
        return pool.subscribe(key: key, priority: priority) { [self] stage in
            if level == 0 {
                return try await decode(plan, validators: validators, fetchKey: fetchKey, stage: stage)
            }
            let upstream = imageStage(plan, validators: validators, fetchKey: fetchKey, level: level - 1, priority: stage.priority)
            let ticket = processing.makeTicket()
            stage.onPriorityChange { [processing] priority in
                upstream.setPriority(priority)
                processing.setPriority(priority, ticket: ticket)
            }
            let input = try await upstream.value(forwarding: stage.send)
            guard case .image(let image, let data, let response) = input else { return input }
            let transformer = plan.transformers[level - 1]
            let options = plan.options
            let output = try await processing.perform(ticket: ticket, priority: stage.priority) {
                try Self.apply(transformer, to: image, options: options)
            }
            return .image(output, data, response)
        }
    }

    private func decode(_ plan: LoadPlan, validators: CacheValidators?, fetchKey: String,
                        stage: SharedWork<ImageOutput>) async throws -> ImageOutput {
        let fetch: SharedWorkSubscription<FetchOutput> = pool.subscribe(key: fetchKey, priority: stage.priority) { stage in
            try await Self.fetch(plan, validators: validators, stage: stage)
        }
        let ticket = processing.makeTicket()
        stage.onPriorityChange { [processing] priority in
            fetch.setPriority(priority)
            processing.setPriority(priority, ticket: ticket)
        }
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
            let coders = plan.coders, options = plan.decodeOptions
            let image = try await processing.perform(ticket: ticket, priority: stage.priority) {
                try coders.decode(data, options: options)
            }
            return .image(image, data, response)
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
    static func fetchKey(_ plan: LoadPlan, validators: CacheValidators?) -> String {
        // A class loader is one instance; a value loader is known by its type (and shares by it).
        let loader = type(of: plan.loader) is AnyObject.Type
            ? UInt(bitPattern: ObjectIdentifier(plan.loader as AnyObject)) : UInt(bitPattern: ObjectIdentifier(type(of: plan.loader)))
        let headers = plan.context.headers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        var key = "fetch|\(loader)|\(plan.url.absoluteString)|\(headers)|\(validators?.etag ?? "")|\(validators?.lastModified ?? "")"
        key += "|\(plan.options.contains(.progressiveLoad))|\(plan.context.timeout.map { "\($0)" } ?? "")"
        if plan.context.requestModifier != nil || plan.context.responseModifier != nil { key += "|" + UUID().uuidString }
        return key
    }
}

extension DecodeOptions {
    /// Every field, in a string that keys the decode stage (cheaper than reflecting the struct).
    var stageKey: String {
        "\(maxPixelSize ?? 0),\(pixelLimit),\(scaleDownLargeImages),\(firstFrameOnly),\(applyOrientation),\(animationByteLimit),\(scale),\(maxFrameCount)"
    }
}
