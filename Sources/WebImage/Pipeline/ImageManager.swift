import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads images: one call queries the caches, else downloads, decodes, transforms and stores.
///
/// ```swift
/// let result = try await ImageManager.shared.loadImage(with: url)
/// let thumbnail = try await manager.loadImage(with: url, options: [.scaleDownLargeImages],
///                                             context: ImageLoadContext(transformer: ResizeTransformer(width: 200, height: 200, mode: .fill)))
/// ```
///
/// Loads of one URL share their work at every stage (see ``ImageLoadContext``): the download,
/// the decode and every prefix of the transform chain. The download is the downloader's: a
/// load joins the same download as a direct ``ImageDownloader/download(_:options:)`` of the
/// same request, and a custom ``loader`` runs under a downloader (its queue and coalescing). A URL that fails permanently (a 404,
/// corrupt bytes) goes on the failed list and later loads fail at once with
/// ``WebImageError/blockedFailedURL`` unless ``ImageLoadOptions/retryFailed`` is set; transient
/// failures (timeouts, lost connections, cancellation) never do.
public final class ImageManager: Sendable {
    /// The manager of ``ImageCache/shared``, ``ImageDownloader/shared`` and ``ImageCodersManager/shared``.
    public static let shared = ImageManager()

    /// The cache loads query and store in (unless a context names another).
    public let cache: any ImageCaching
    /// The loader that fetches bytes (unless a context names another).
    public let loader: any ImageLoader
    /// The coders that decode (unless a context names others).
    public let coders: ImageCodersManager
    /// Settings for every load.
    public let configuration: ImageManagerConfiguration
    /// The downloader every load's bytes are queued and coalesced in: ``loader``, or one made
    /// for a loader that is not a downloader, which then runs under it as its transport (as
    /// does a context's custom loader).
    let downloader: ImageDownloader
    /// The data tier encoded loads keep their outputs and sources in (``encodedImage(for:)``).
    public let dataCache: ImageDataCache
    /// The tier of encoded outputs shared with other processes, if any.
    public let remoteStore: (any ImageDataCache.SharedStore)?
    let encodeBounds: EncodeStageBounds

    let stages: PipelineStages
    let failedURLs = FailedURLList()
    private let running = Locked<Set<ImageTask>>([])
    private let storesInFlight = Locked<Set<String>>([])
    private let backgroundStores = BackgroundWrites()

    /// Creates a manager from its parts.
    /// - Parameters:
    ///   - cache: the cache decoded loads query and store in (``cache``).
    ///   - loader: the loader that fetches bytes (``loader``).
    ///   - coders: the coders that decode (``coders``).
    ///   - configuration: settings for every load (``configuration``).
    ///   - dataCache: the data tier of encoded loads; by default 64 MiB in memory over the disk
    ///     cache of `cache` when it is an ``ImageCache`` (sources there are the original bytes
    ///     its loads stored), else memory only.
    ///   - remoteStore: the shared tier of encoded outputs, if any.
    public init(cache: any ImageCaching = ImageCache.shared, loader: any ImageLoader = ImageDownloader.shared,
                coders: ImageCodersManager = .shared, configuration: ImageManagerConfiguration = ImageManagerConfiguration(),
                dataCache: ImageDataCache? = nil, remoteStore: (any ImageDataCache.SharedStore)? = nil) {
        self.cache = cache
        self.dataCache = dataCache ?? ImageDataCache(memoryBytes: 64 << 20, disk: (cache as? ImageCache)?.diskCache)
        self.remoteStore = remoteStore
        encodeBounds = EncodeStageBounds(configuration.encodeStage)
        self.loader = loader
        self.coders = coders
        self.configuration = configuration
        downloader = loader as? ImageDownloader ?? ImageDownloader()
        stages = PipelineStages(processingConcurrency: configuration.processingConcurrency)
    }

    // MARK: Loading

    /// Loads the image at `url` and returns it; cancelling the calling task cancels the load.
    public func loadImage(with url: URL, options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext()) async throws -> ImageResult {
        try await imageTask(with: url, options: options, context: context).result
    }

    /// Starts loading the image at `url` and returns the task at once: cancel it, change its
    /// priority, read its ``ImageTask/events`` or await its ``ImageTask/result``.
    public func imageTask(with url: URL, options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext()) -> ImageTask {
        imageTask(with: ImageRequest(url: url, options: options, context: context))
    }

    /// Starts the load `request` describes (its rendering is not used: see ``encodedImage(for:)``)
    /// and returns the task at once.
    public func imageTask(with request: ImageRequest) -> ImageTask {
        let plan = LoadPlan(request, manager: self)
        let url = request.url
        let task = ImageTask(url: url, priority: plan.priority)
        running.withLock { _ = $0.insert(task) }
        let work = Task.detached(priority: plan.priority.taskPriority) { [self] () throws -> ImageResult in
            let outcome: Result<ImageResult, WebImageError>
            do {
                let result = try await run(plan, task: task)
                outcome = task.isCancelled ? .failure(.cancelled) : .success(result)
            } catch {
                outcome = .failure(task.isCancelled ? .cancelled : WebImageError.fromLoading(error))
            }
            if case .failure(let error) = outcome, FailedURLList.records(error) { failedURLs.insert(url) }
            running.withLock { _ = $0.remove(task) }
            task.finish(outcome)
            return try outcome.get()
        }
        task.attach(work)
        return task
    }

    /// Loads the image at `url` and calls `completion` (on the context's callback queue, if any)
    /// when done; SDWebImage's form. With ``ImageLoadOptions/refreshCached`` the completion is
    /// called with the cached image first and again if the server sent a new one.
    @discardableResult
    public func loadImage(with url: URL, options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext(),
                          progress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                          completion: @escaping @Sendable (Result<ImageResult, WebImageError>) -> Void) -> ImageTask {
        let task = imageTask(with: url, options: options, context: context)
        let queue = context.callbackQueue
        let call: @Sendable (@escaping @Sendable () -> Void) -> Void = { work in
            if let queue { queue.async(execute: work) } else { work() }
        }
        Task.detached {
            do {
                for try await event in task.events {
                    switch event {
                    case .progress(let received, let expected):
                        if let progress { call { progress(received, expected) } }
                    case .cachedImage(let result), .completed(let result):
                        call { completion(.success(result)) }
                    case .partialImage:
                        break
                    }
                }
            } catch {
                let failure = WebImageError.fromLoading(error)
                call { completion(.failure(failure)) }
            }
        }
        return task
    }

    // MARK: Control

    /// Cancels every running load of this manager.
    public func cancelAll() {
        for task in running.withLock({ $0 }) { task.cancel() }
    }

    /// Whether any load of this manager is running.
    public var isRunning: Bool { running.withLock { !$0.isEmpty } }

    /// How many loads of this manager are running.
    public var runningCount: Int { running.withLock { $0.count } }

    // MARK: Failed URLs

    /// Whether `url` is on the failed list.
    public func isFailedURL(_ url: URL) -> Bool { failedURLs.contains(url) }

    /// Takes `url` off the failed list.
    public func removeFailedURL(_ url: URL) { failedURLs.remove(url) }

    /// Empties the failed list.
    public func removeAllFailedURLs() { failedURLs.removeAll() }

    // MARK: Cache

    /// The key the image at `url` is cached under (before thumbnail and transform suffixes), or
    /// `nil` when the filter says not to cache it.
    public func cacheKey(for url: URL, context: ImageLoadContext = ImageLoadContext()) -> String? {
        LoadPlan(url: url, options: [], context: context, manager: self).sourceKey
    }

    /// Whether the image at `url` is in memory or on disk.
    public func cachedImageExists(for url: URL) async -> Bool {
        guard let key = cacheKey(for: url) else { return false }
        return await cache.contains(key: key) != .none
    }

    /// Whether the bytes of the image at `url` are on disk.
    public func diskImageExists(for url: URL) async -> Bool {
        guard let key = cacheKey(for: url) else { return false }
        return await cache.containsOnDisk(key: key)
    }

    /// Stores `image` (and its original bytes, if any) as the image of `url`.
    public func store(_ image: DecodedImage, data: Data? = nil, for url: URL, toDisk: Bool = true) async {
        guard let key = cacheKey(for: url) else { return }
        await cache.store(image, data: data, metadata: ImageCacheMetadata(originalURL: url.absoluteString), key: key,
                          to: toDisk ? .memoryAndDisk : .memory)
    }

    /// Waits until every store still running behind a delivered load has landed. Call it before
    /// a process exits, or the last images loaded may not reach the disk cache.
    public func waitForPendingStores() async {
        await backgroundStores.waitForAll()
        await dataCache.waitForPendingStores()
        await remoteStore?.waitForPendingStores()
    }

    // MARK: Store claims

    func storeInBackground(_ work: @escaping @Sendable () async -> Void) {
        backgroundStores.run(work)
    }

    /// Claims the store of `key` so loads that shared a stage don't write the same entry twice.
    func claimStore(_ key: String) -> Bool { storesInFlight.withLock { $0.insert(key).inserted } }
    func releaseStore(_ key: String) { _ = storesInFlight.withLock { $0.remove(key) } }
}
