#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encoded loads: data tier → (shared) remote tier → sources (data tier, else the downloader)
/// → render in a processing slot → data tier and remote tier → caller.
extension ImageManager {
    /// The bytes of `request`'s source as its ``ImageRequest/rendering`` makes them: from the data
    /// tier (memory, then disk), from the remote tier, or rendered. Requests of the same output
    /// share one render; every output of a source shares one fetch of it. Admission, the memory
    /// budget and the deadline are the manager's ``ImageManagerConfiguration/encodeStage``.
    ///
    /// Errors pass through as thrown: the downloader's and the stage's as ``WebImageError``, the
    /// rendering's and the ``ImageRequest/sourceFetch`` interceptor's as they threw them.
    public func encodedImage(for request: ImageRequest) async throws -> ImageManager.EncodedResult {
        guard let rendering = request.rendering else {
            throw WebImageError.invalidRequest("an encoded load needs a rendering")
        }
        let plan = LoadPlan(request, manager: self)
        let caches = plan.sourceKey != nil
        let key = rendering.outputKey(sourceKey: plan.sourceKey ?? plan.url.absoluteString)
        if caches, let hit = await dataCache.value(forKey: key, accepts: Self.isEncodedOutput),
           let image = EncodedImage(hit.entry) {
            return ImageManager.EncodedResult(image: image, origin: hit.tier == .memory ? .memory : .disk)
        }
        var isNew = false
        let stageKey = PipelineStageKey.encode(EncodeStageKey(dataCache: ObjectIdentifier(dataCache), outputKey: key))
        let subscription = stages.pool.subscribe(key: stageKey, priority: plan.priority, prepare: { (stage: SharedWork<ImageManager.EncodedResult>) in
            isNew = true
            // Admitted when the render is made: callers that join it take no slot of their own.
            let admitted = encodeBounds.admit()
            return { [self] stage in
                guard admitted else { throw WebImageError.overloaded }
                defer { encodeBounds.release() }
                // A render that ended since the caller's lookup left its output in memory before
                // it left the pool: it is not rendered twice.
                if caches, let entry = dataCache.memoryValue(forKey: key), let image = EncodedImage(entry) {
                    return ImageManager.EncodedResult(image: image, origin: .memory)
                }
                let origin: ImageManager.EncodedResult.Origin
                let image: EncodedImage
                if let stored = await remoteStore?.value(forKey: key) {
                    (image, origin) = (stored, .remote)
                } else {
                    image = try await encodeBounds.withDeadline(of: stage) {
                        try await render(request, plan: plan, rendering: rendering, stage: stage)
                    }
                    remoteStore?.store(image, forKey: key)
                    origin = .rendered
                }
                if caches {
                    dataCache.store(ImageDataCache.Entry(image), forKey: key,
                                    diskWrite: plan.options.contains(.cacheMemoryOnly) ? .never : .now)
                }
                return ImageManager.EncodedResult(image: image, origin: origin)
            }
        })
        var result = try await withTaskCancellationHandler {
            try await subscription.value()
        } onCancel: {
            subscription.cancelFromCancellationHandler()
        }
        // A caller that joined the stage did not make its answer: counted once, by its maker.
        if !isNew, result.origin == .rendered || result.origin == .remote { result.origin = .joined }
        return result
    }

    /// The source of `request` as an encoded load gets it (the data tier, else one fetch shared
    /// with every load of it), admitted as renders are: for reading a source's header without
    /// rendering it.
    public func sourceImage(for request: ImageRequest) async throws -> SourceImage {
        guard encodeBounds.admit() else { throw WebImageError.overloaded }
        defer { encodeBounds.release() }
        let plan = LoadPlan(request, manager: self)
        return try await source(plan, interceptor: request.sourceFetch, priority: plan.priority)
    }

    /// The sources, the memory, a processing slot, the render.
    private func render(_ request: ImageRequest, plan: LoadPlan, rendering: any ImageRendering,
                        stage: SharedWork<ImageManager.EncodedResult>) async throws -> EncodedImage {
        var sources = [try await source(plan, interceptor: request.sourceFetch, priority: stage.priority)]
        for additional in rendering.additionalSources {
            let plan = LoadPlan(additional, manager: self)
            sources.append(try await source(plan, interceptor: additional.sourceFetch ?? request.sourceFetch, priority: stage.priority))
        }
        // The limits, from the headers, before any memory is taken.
        let prepared = try rendering.prepare(sources, memoryBudget: encodeBounds.memory?.capacity)
        return try await encodeBounds.withMemory(prepared.bytes) {
            // Stopped while it waited for the memory: it goes back before any work.
            try Task.checkCancellation()
            let cancellation = DecodeCancellation()
            let ticket = stages.processing.makeTicket()
            stage.onPriorityChange { [processing = stages.processing] in processing.setPriority($0, ticket: ticket) }
            return try await withTaskCancellationHandler {
                try await stages.processing.perform(ticket: ticket, priority: stage.priority) { try prepared.render(cancellation) }
            } onCancel: {
                cancellation.cancel()
            }
        }
    }

    /// `plan`'s source: kept in the data tier (memory, then disk), else fetched and kept (unless
    /// the origin said `no-store`). Concurrent callers share one lookup and fetch; a fetch that
    /// ended since the caller's lookup left its source in memory before it left the pool, so a
    /// source is fetched at most once while it stays cached.
    private func source(_ plan: LoadPlan, interceptor: (any ImageRequest.SourceFetchInterceptor)?, priority: LoadPriority) async throws -> SourceImage {
        let key = plan.sourceKey
        if let key, let entry = dataCache.memoryValue(forKey: key) { return SourceImage(data: entry.data, metadata: entry.metadata) }
        let stageKey = PipelineStageKey.source(SourceStageKey(dataCache: ObjectIdentifier(dataCache), downloader: ObjectIdentifier(plan.downloader),
                                                              url: plan.url, cacheKey: key))
        let subscription = stages.pool.subscribe(key: stageKey, priority: priority, work: { [self] (stage: SharedWork<SourceImage>) in
            let url = plan.url
            if let key {
                if let entry = dataCache.memoryValue(forKey: key) { return SourceImage(data: entry.data, metadata: entry.metadata) }
                // The URL in the metadata guards against a foreign entry under the same file name.
                if let hit = await dataCache.value(forKey: key, accepts: { $0.originalURL == url.absoluteString }) {
                    return SourceImage(data: hit.entry.data, metadata: hit.entry.metadata)
                }
            }
            let fetch: @Sendable ([String: String]) async throws -> SourceImage = { [self] headers in
                try await download(plan, headers: headers, stage: stage)
            }
            if let interceptor { return try await interceptor.fetch(url, next: fetch) }
            return try await fetch([:])
        })
        return try await withTaskCancellationHandler {
            try await subscription.value()
        } onCancel: {
            subscription.cancelFromCancellationHandler()
        }
    }

    /// Fetches `plan`'s bytes as a caller of the downloader's download (queued, coalesced and
    /// stopped there) and keeps them in the data tier.
    private func download(_ plan: LoadPlan, headers: [String: String], stage: SharedWork<SourceImage>) async throws -> SourceImage {
        let prepared = try plan.download(validators: nil, priority: stage.priority, headers: headers)
        let bytes = plan.downloader.subscribe(prepared, priority: stage.priority, accepts: plan.context.responseModifier)
        stage.onPriorityChange { bytes.setPriority($0) }
        let outcome = try await withTaskCancellationHandler {
            try await bytes.value()
        } onCancel: {
            bytes.cancelFromCancellationHandler()
        }
        // Never asked for: the request carries no validators.
        guard case .data(let data, let response) = outcome else { throw WebImageError.httpStatus(304) }
        let source = SourceImage(data: data, response: response, url: plan.url)
        if let key = plan.sourceKey, SourceImage.mayStore(response) {
            dataCache.store(ImageDataCache.Entry(data: data, metadata: source.metadata), forKey: key,
                            diskWrite: plan.options.contains(.cacheMemoryOnly) ? .never : .onReuse)
        }
        return source
    }

    /// Whether a data-tier entry is an encoded output that may be sent (``EncodedImage/isSendable(contentType:etag:)``).
    static func isEncodedOutput(_ metadata: ImageCacheMetadata) -> Bool {
        guard let contentType = metadata.contentType, let etag = metadata.etag else { return false }
        return EncodedImage.isSendable(contentType: contentType, etag: etag)
    }
}

extension EncodedImage {
    /// The output a data-tier entry holds, if it is one.
    init?(_ entry: ImageDataCache.Entry) {
        guard let contentType = entry.metadata.contentType, let etag = entry.metadata.etag,
              Self.isSendable(contentType: contentType, etag: etag) else { return nil }
        self.init(body: entry.data, contentType: contentType, etag: etag)
    }
}

extension ImageDataCache.Entry {
    /// An encoded output as the data tier keeps it.
    init(_ image: EncodedImage) {
        self.init(data: image.body, metadata: ImageCacheMetadata(contentType: image.contentType, etag: image.etag))
    }
}
