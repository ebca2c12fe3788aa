#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageDownloader {
    /// How a download that succeeded ended, for the completion-handler form of
    /// ``ImageDownloader/download(_:options:progress:completion:)``.
    public enum Outcome: Sendable {
        /// The whole body, and the response it came with.
        case data(Data, ImageLoadResponse)
        /// The server confirmed the stored copy (HTTP 304 to a request with validators).
        case notModified(ImageLoadResponse)
    }
}
