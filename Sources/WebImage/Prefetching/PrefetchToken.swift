#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImagePrefetcher {
    /// One prefetch: watch its progress, await its summary, cancel it.
    public final class Token: Sendable {
        /// Progress after every URL; ends when the prefetch ends. One consumer; keeps the newest when unread.
        public let progress: AsyncStream<ImagePrefetcher.Progress>
        /// The URLs of this prefetch.
        public let urls: [URL]
        private let continuation: AsyncStream<PrefetchProgress>.Continuation
        private let work: Locked<Task<PrefetchSummary, Never>?> = Locked(nil)
        private let cancelled = Locked(false)

        init(urls: [URL]) {
            self.urls = urls
            (progress, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
        }

        /// The summary, once the prefetch ended (finished or cancelled).
        public var summary: ImagePrefetcher.Summary {
            get async {
                guard let work = work.withLock({ $0 }) else {
                    return PrefetchSummary(progress: PrefetchProgress(total: urls.count), cacheHits: 0, wasCancelled: true, duration: .zero)
                }
                return await work.value
            }
        }

        /// Stops the loads of this prefetch that have not ended; loads shared with other callers go on for them.
        public func cancel() {
            cancelled.withLock { $0 = true }
            work.withLock { $0 }?.cancel()
        }

        /// Whether ``cancel()`` was called.
        public var isCancelled: Bool { cancelled.withLock { $0 } }

        func attach(_ task: Task<PrefetchSummary, Never>) {
            work.withLock { $0 = task }
            if isCancelled { task.cancel() }
        }

        func report(_ progress: PrefetchProgress) { continuation.yield(progress) }
        func end() { continuation.finish() }
    }
}
