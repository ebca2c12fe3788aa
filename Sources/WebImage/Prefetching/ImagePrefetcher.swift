#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads images into the cache ahead of need: low priority, a concurrency limit of its own,
/// progress as an `AsyncSequence`, a summary at the end.
///
/// ```swift
/// let token = prefetcher.prefetch(urls)
/// for await progress in token.progress { print(progress.completed, "/", progress.total) }
/// let summary = await token.summary
/// ```
///
/// Loads go through the prefetcher's ``ImageManager``, so a prefetched image is found by later
/// loads of the same URL, and a visible load of a URL being prefetched joins the prefetch's
/// download (raising its priority) instead of starting another.
public final class ImagePrefetcher: Sendable {
    /// The prefetcher's settings.
    public struct Configuration: Sendable {
        /// How many URLs load at once, across every running prefetch of this prefetcher.
        public var maxConcurrentPrefetches: Int
        /// Options added to every load (``ImageLoadOptions/lowPriority`` unless a prefetch asks
        /// for ``ImageLoadOptions/highPriority``).
        public var options: ImageLoadOptions
        /// What a new prefetch does while earlier ones run.
        public var policy: ImagePrefetcher.Policy

        public init(maxConcurrentPrefetches: Int = 3, options: ImageLoadOptions = [], policy: ImagePrefetcher.Policy = .runConcurrently) {
            self.maxConcurrentPrefetches = maxConcurrentPrefetches
            self.options = options
            self.policy = policy
        }
    }

    /// The manager that loads.
    public let manager: ImageManager
    /// The settings.
    public let configuration: Configuration

    private let slots: WorkQueue
    /// The running prefetches, oldest first; the lock guards only the list.
    private let active = Locked<[PrefetchToken]>([])

    /// Creates a prefetcher loading through `manager`.
    public init(manager: ImageManager = .shared, configuration: Configuration = Configuration()) {
        self.manager = manager
        self.configuration = configuration
        slots = WorkQueue(width: configuration.maxConcurrentPrefetches)
    }

    /// Starts prefetching `urls` (duplicates are loaded once).
    @discardableResult
    public func prefetch(_ urls: [URL], options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext()) -> ImagePrefetcher.Token {
        var seen = Set<URL>()
        let unique = urls.filter { seen.insert($0).inserted }
        let token = PrefetchToken(urls: unique)
        let previous = active.withLock { list -> [PrefetchToken] in
            defer { list.append(token) }
            return list
        }
        if configuration.policy == .cancelPrevious { for earlier in previous { earlier.cancel() } }
        var loadOptions = configuration.options.union(options)
        if !loadOptions.contains(.highPriority) { loadOptions.insert(.lowPriority) }
        let waitFor = configuration.policy == .queueBehindPrevious ? previous : []
        let task = Task.detached(priority: .utility) { [self, loadOptions] in
            for earlier in waitFor { _ = await earlier.summary }
            let summary = await run(token, options: loadOptions, context: context)
            active.withLock { list in list.removeAll { $0 === token } }
            token.end()
            return summary
        }
        token.attach(task)
        return token
    }

    /// Starts prefetching and calls `completion` with the summary; SDWebImage's form.
    @discardableResult
    public func prefetch(_ urls: [URL], options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext(),
                         progress: (@Sendable (ImagePrefetcher.Progress) -> Void)? = nil,
                         completion: @escaping @Sendable (ImagePrefetcher.Summary) -> Void) -> ImagePrefetcher.Token {
        let token = prefetch(urls, options: options, context: context)
        Task.detached {
            for await step in token.progress { progress?(step) }
            completion(await token.summary)
        }
        return token
    }

    /// Cancels every running prefetch.
    public func cancelAll() {
        for token in active.withLock({ $0 }) { token.cancel() }
    }

    /// How many prefetches are running.
    public var runningPrefetchCount: Int { active.withLock { $0.count } }

    private func run(_ token: PrefetchToken, options: ImageLoadOptions, context: ImageLoadContext) async -> PrefetchSummary {
        let start = ContinuousClock.now
        var progress = PrefetchProgress(total: token.urls.count)
        var cacheHits = 0
        token.report(progress)
        await withTaskGroup(of: (URL, Result<ImageResult, WebImageError>).self) { group in
            for url in token.urls {
                group.addTask { [self] in
                    // A slot of the prefetcher's own limit, taken in order; cancellation frees it.
                    do {
                        let ticket = slots.makeTicket()
                        return (url, try await slots.performAsync(ticket: ticket, priority: .low) {
                            .success(try await manager.loadImage(with: url, options: options, context: context))
                        })
                    } catch {
                        return (url, .failure(WebImageError.fromLoading(error)))
                    }
                }
            }
            for await (url, outcome) in group {
                progress.lastURL = url
                switch outcome {
                case .success(let result):
                    progress.finished += 1
                    if result.cacheType == .none { progress.downloadedBytes += Int64(result.data?.count ?? 0) } else { cacheHits += 1 }
                case .failure(.cancelled):
                    break
                case .failure:
                    progress.failed += 1
                }
                token.report(progress)
            }
        }
        return PrefetchSummary(progress: progress, cacheHits: cacheHits, wasCancelled: token.isCancelled,
                               duration: ContinuousClock.now - start)
    }
}
