#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One load from start to end: failed list → cache query → download gate → shared stages
/// (the downloader's download, decode, transforms) → store → result.
extension ImageManager {
    func run(_ plan: LoadPlan, task: ImageTask) async throws -> ImageResult {
        if !plan.options.contains(.retryFailed), failedURLs.contains(plan.url) { throw WebImageError.blockedFailedURL }
        var cached: ImageResult?
        var validators: HTTPLoadRequest.Validators?
        if !plan.options.contains(.fromLoaderOnly) {
            (cached, validators) = try await queryCache(plan, task: task)
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

        let download = try plan.download(validators: cached == nil ? nil : validators, priority: task.priority)
        let subscription = stages.image(for: plan, source: .download(download, plan.downloader), priority: task.priority)
        let output = try await value(of: subscription, for: task)
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
        case .cachedImage(let image):
            // A network source yields `.image`; this is what a cache source would deliver.
            return ImageResult(image: image, data: nil, cacheType: .none, url: plan.url, cacheKey: plan.finalKey)
        }
    }

    /// Waits for a stage's output on behalf of `task`: its progress and partial images go to the
    /// task, its priority follows the task's, and cancelling the task leaves the stage.
    private func value(of subscription: SharedWorkSubscription<ImageOutput>, for task: ImageTask) async throws -> ImageOutput {
        task.setPrioritySink { subscription.setPriority($0) }
        defer { task.setPrioritySink(nil) }
        return try await withTaskCancellationHandler {
            try await subscription.value { event in
                switch event {
                case .progress(let received, let expected): task.emit(.progress(received: received, expected: expected))
                case .partialImage(let image): task.emit(.partialImage(image))
                case .response, .partialData, .value: break
                }
            }
        } onCancel: {
            subscription.cancelFromCancellationHandler()
        }
    }

    private func checkCancelled(_ task: ImageTask) throws {
        if task.isCancelled || Task.isCancelled { throw WebImageError.cancelled }
    }

    /// The cached image for `plan` and the validators of its stored bytes. The cache answers with
    /// a memory image or bytes; bytes are decoded in the decode stage, at the load's priority,
    /// shared with other loads of them. When only the original is cached (a new thumbnail size
    /// or transform of a known image), the image is made from it through the decode and
    /// transform stages, stored under its own key, and the original is not downloaded again.
    private func queryCache(_ plan: LoadPlan, task: ImageTask) async throws -> (ImageResult?, HTTPLoadRequest.Validators?) {
        guard let cache = plan.cache, let finalKey = plan.finalKey, let sourceKey = plan.sourceKey else { return (nil, nil) }
        var queryOptions: ImageCacheQueryOptions = [.undecoded]
        if plan.options.contains(.queryMemoryDataToo) || plan.options.contains(.refreshCached) { queryOptions.insert(.queryMemoryData) }
        let hit = await cache.query(key: finalKey, options: queryOptions, decodeOptions: plan.decodeOptions)
        if let image = hit.image {
            return (ImageResult(image: image, data: hit.data, cacheType: hit.cacheType, url: plan.url, cacheKey: finalKey),
                    hit.metadata?.validators)
        }
        if let data = hit.data, let image = try await makeImage(plan, cache: cache, key: finalKey, from: .bytes(data), levels: 0, task: task) {
            await cache.store(image, data: nil, metadata: nil, key: finalKey, to: .memory)
            return (ImageResult(image: image, data: data, cacheType: .disk, url: plan.url, cacheKey: finalKey), hit.metadata?.validators)
        }
        guard !plan.deliversOriginal else { return (nil, nil) }
        // The decoded original must not land in memory under the source key: it may be a thumbnail.
        let original = await cache.query(key: sourceKey, options: [.skipMemoryStore, .undecoded], decodeOptions: plan.decodeOptions)
        let content: CachedContent
        if let image = original.image {
            content = .image(image)
        } else if let data = original.data {
            content = .bytes(data)
        } else {
            return (nil, nil)
        }
        try Task.checkCancellation()
        guard let image = try await makeImage(plan, cache: cache, key: sourceKey, from: content, levels: plan.transformers.count, task: task) else {
            return (nil, nil)
        }
        let metadata = original.metadata
        let target: ImageCacheStoreTarget = plan.transformers.isEmpty || plan.options.contains(.cacheMemoryOnly) ? .memory : .memoryAndDisk
        await cache.store(image, data: nil, metadata: metadata, key: finalKey, to: target)
        return (ImageResult(image: image, data: original.data, cacheType: original.cacheType, url: plan.url, cacheKey: finalKey),
                metadata?.validators)
    }

    /// What `plan`'s stages make, `levels` transforms deep, from what `cache` held under `key`;
    /// `nil` when its bytes no longer decode (the entry is dropped: a miss).
    private func makeImage(_ plan: LoadPlan, cache: any ImageCaching, key: String, from content: CachedContent,
                           levels: Int, task: ImageTask) async throws -> DecodedImage? {
        let subscription = stages.image(for: plan, source: .cached(cache, key: key, content), levels: levels, priority: task.priority)
        do {
            return try await value(of: subscription, for: task).image
        } catch is UndecodableCachedBytes {
            await cache.remove(key: key, fromDisk: true)
            return nil
        }
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
