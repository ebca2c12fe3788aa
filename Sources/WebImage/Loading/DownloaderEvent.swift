#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageDownloader {
    /// Something an ``ImageDownloader`` did, for observers of ``ImageDownloader/events()``.
    public enum Event: Sendable, Hashable {
        /// A download left the queue and its request went out.
        case started(URL)
        /// The response head arrived (status `nil` for file and data URLs).
        case responseReceived(URL, statusCode: Int?)
        /// A download completed (or was confirmed not modified) with this many bytes.
        case finished(URL, bytes: Int)
        /// A download failed.
        case failed(URL, WebImageError)
        /// A download was cancelled (its last caller left, or ``ImageDownloader/cancelAll()``).
        case cancelled(URL)
    }
}
