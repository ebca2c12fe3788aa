#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageDownloader {
    /// One caller's handle on a (possibly shared) download.
    ///
    /// Each token has its own event stream; ``cancel()`` detaches this caller only (its stream ends with
    /// ``WebImageError/cancelled``); the network request stops when its last caller leaves.
    public struct Token: Sendable {
        /// This caller's events: response, progress, partial data, then completed/notModified or an error.
        public let events: AsyncThrowingStream<ImageLoadEvent, any Error>
        /// The URL requested (after the request modifiers).
        public let url: URL
        /// This caller's place in the download's shared work; `nil` for a request refused before it started.
        let waiter: SharedWorkWaiter<DownloadOutcome>?

        /// Detaches this caller; its stream finishes with ``WebImageError/cancelled``.
        public func cancel() {
            waiter?.cancel()
        }

        /// Changes this caller's priority; a queued download runs at the highest priority of its callers.
        public func setPriority(_ priority: LoadPriority) {
            waiter?.setPriority(priority)
        }
    }
}
