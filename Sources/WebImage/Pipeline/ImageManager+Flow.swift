#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One load from start to end: failed list → cache query → download gate → shared stages
/// (fetch, decode, transforms) → store → result.
extension ImageManager {
    func run(_ plan: LoadPlan, task: ImageTask) async throws -> ImageResult {
        if !plan.options.contains(.retryFailed), failedURLs.contains(plan.url) { throw WebImageError.blockedFailedURL }
        var cached: ImageResult?
        var validators: CacheValidators?
        if !plan.options.contains(.fromLoaderOnly) {
            (cached, validators) = try await queryCache(plan)
        }
        try checkCancelled(task)
        if let cached {
            guard plan.options.contains(.refreshCached) else { return cached }
            task.emit(.cachedImage(cached))
        }
        if plan.options.contains(.fromCacheOnly) {
            if let cached { return cached }
            throw WebImageError.notCached
        }
        if let shouldDownload = plan.shouldDownload(self), !shouldDownload(plan.url) {
            if let cached { return cached }
            throw WebImageError.rejected("shouldDownload declined \(plan.url.absoluteString)")
        }
        guard plan.loader.canLoad(plan.url) else { throw WebImageError.invalidURL(plan.url.absoluteString) }

        let subscription = stages.image(for: plan, validators: cached == nil ? nil : validators, priority: task.priority)
        task.setPrioritySink { subscription.setPriority($0) }
        let output = try await withTaskCancellationHandler {
            try await subscription.value { event in
                switch event {
                case .progress(let received, let expected): task.emit(.progress(received: received, expected: expected))
                case .partialImage(let image): task.emit(.partialImage(image))
                case .partialData, .value: break
                }
            }
        } onCancel: {
            subscription.cancel()
        }
        task.setPrioritySink(nil)
        try checkCancelled(task)

        switch output {
        case .notModified:
            // Validators are sent only with a cached copy, so a 304 always has one to confirm.
            guard let cached else { throw WebImageError.httpStatus(304) }
            return cached
        case .image(let image, let data, let response):
            failedURLs.remove(plan.url)
            let result = ImageResult(image: image, data: data, cacheType: .none, url: response.url,
                                     cacheKey: plan.finalKey, response: response)
            if plan.options.contains(.waitStoreCache) {
                await store(image, data: data, response: response, plan: plan)
            } else {
                storeInBackground { [self] in await store(image, data: data, response: response, plan: plan) }
            }
            return result
        }
    }

    private func checkCancelled(_ task: ImageTask) throws {
        if task.isCancelled || Task.isCancelled { throw WebImageError.cancelled }
    }

    /// The cached image for `plan` and the validators of its stored bytes. When only the original
    /// bytes are cached (a new thumbnail size or transform of a known image), the image is made
    /// from them, stored under its own key, and the original is not downloaded again.
    private func queryCache(_ plan: LoadPlan) async throws -> (ImageResult?, CacheValidators?) {
        guard let cache = plan.cache, let finalKey = plan.finalKey, let sourceKey = plan.sourceKey else { return (nil, nil) }
        var queryOptions: ImageCacheQueryOptions = []
        if plan.options.contains(.queryMemoryDataToo) || plan.options.contains(.refreshCached) { queryOptions.insert(.queryMemoryData) }
        let hit = await cache.query(key: finalKey, options: queryOptions, decodeOptions: plan.decodeOptions)
        if let image = hit.image {
            return (ImageResult(image: image, data: hit.data, cacheType: hit.cacheType, url: plan.url, cacheKey: finalKey),
                    hit.metadata?.validators)
        }
        guard !plan.deliversOriginal else { return (nil, nil) }
        // The decoded original must not land in memory under the source key: it may be a thumbnail.
        let original = await cache.query(key: sourceKey, options: [.skipMemoryStore], decodeOptions: plan.decodeOptions)
        guard let originalImage = original.image else { return (nil, nil) }
        try Task.checkCancellation()
        let decodeOptions = plan.decodeOptions, transformers = plan.transformers, options = plan.options
        let ticket = stages.processing.makeTicket()
        let image = try await stages.processing.perform(ticket: ticket, priority: plan.priority) {
            var image = originalImage
            // A memory hit is the full-size original; make it what a decode with these options makes.
            if decodeOptions.firstFrameOnly, image.isAnimated { image = image.firstFrameOnly }
            if let side = decodeOptions.maxPixelSize, max(image.width, image.height) > side {
                image = try image.applying(ResizeTransformer(width: side, height: side, mode: .fit))
            }
            for transformer in transformers { image = try PipelineStages.apply(transformer, to: image, options: options) }
            return image
        }
        let metadata = original.metadata
        let target: ImageCacheStoreTarget = transformers.isEmpty || plan.options.contains(.cacheMemoryOnly) ? .memory : .memoryAndDisk
        await cache.store(image, data: nil, metadata: metadata, key: finalKey, to: target)
        return (ImageResult(image: image, data: original.data, cacheType: original.cacheType, url: plan.url, cacheKey: finalKey),
                metadata?.validators)
    }

    /// Stores a loaded image: the original bytes under the source key (unless memory-only), the
    /// delivered image in memory under the final key, and a transformed image also on disk.
    func store(_ image: DecodedImage, data: Data, response: ImageLoadResponse, plan: LoadPlan) async {
        guard let cache = plan.cache, let finalKey = plan.finalKey, let sourceKey = plan.sourceKey else { return }
        guard claimStore(finalKey) else { return }
        defer { releaseStore(finalKey) }
        let memoryOnly = plan.options.contains(.cacheMemoryOnly)
        let metadata = ImageCacheMetadata(originalURL: response.url.absoluteString, contentType: response.mimeType,
                                          etag: response.headers["etag"], lastModified: response.headers["last-modified"])
        if plan.deliversOriginal {
            await cache.store(image, data: data, metadata: metadata, key: finalKey, to: memoryOnly ? .memory : .memoryAndDisk)
            return
        }
        if !memoryOnly { await cache.store(nil, data: data, metadata: metadata, key: sourceKey, to: .disk) }
        let transformed = !plan.transformers.isEmpty
        await cache.store(image, data: nil, metadata: metadata, key: finalKey, to: transformed && !memoryOnly ? .memoryAndDisk : .memory)
    }
}
