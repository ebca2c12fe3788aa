#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImagePrefetcher {
    /// How far a prefetch has come.
    public struct Progress: Sendable, Hashable {
        /// URLs whose image is now cached (loaded or already there).
        public var finished: Int
        /// URLs that failed (or were skipped as known-bad).
        public var failed: Int
        /// All URLs of the prefetch.
        public var total: Int
        /// Bytes downloaded so far (cache hits add nothing).
        public var downloadedBytes: Int64
        /// The URL whose load just ended, if any.
        public var lastURL: URL?

        public init(finished: Int = 0, failed: Int = 0, total: Int, downloadedBytes: Int64 = 0, lastURL: URL? = nil) {
            self.finished = finished
            self.failed = failed
            self.total = total
            self.downloadedBytes = downloadedBytes
            self.lastURL = lastURL
        }

        /// URLs done either way.
        public var completed: Int { finished + failed }
        /// The fraction done, 0...1.
        public var fraction: Double { total == 0 ? 1 : Double(completed) / Double(total) }
    }
}

extension ImagePrefetcher {
    /// How a prefetch ended.
    public struct Summary: Sendable, Hashable {
        /// The progress at the end.
        public var progress: ImagePrefetcher.Progress
        /// Loads that were served from a cache, without downloading.
        public var cacheHits: Int
        /// Whether the prefetch was cancelled before every URL was tried.
        public var wasCancelled: Bool
        /// How long it ran.
        public var duration: Duration
    }
}

extension ImagePrefetcher {
    /// What a new prefetch does when the prefetcher is still busy with earlier ones.
    public enum Policy: Sendable, Hashable {
        /// Run beside the earlier prefetches (SDWebImage 5's behaviour); all share the concurrency limit.
        case runConcurrently
        /// Cancel the earlier prefetches first (a scrolled-away list's images are no longer wanted).
        case cancelPrevious
        /// Start only when the earlier prefetches have ended.
        case queueBehindPrevious
    }
}
