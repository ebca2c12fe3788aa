#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request as the downloader sends it: after its request modifiers and defaults, routed to
/// the loader that will run it. Made by ``ImageDownloader/prepare(_:modifier:transport:)``,
/// so a caller can know the download's key before it joins (the pipeline's decode stage is
/// keyed by it).
struct PreparedDownload: Sendable {
    let request: ImageLoadRequest
    /// Whether the download takes one of the queue's slots (network loads do; file and data
    /// URLs are local and cheap and take none).
    let usesSlot: Bool
    /// A custom loader that runs the download in place of the downloader's own (the manager's
    /// or a context's ``ImageLoader`` that is not a downloader): it gets the queue and the
    /// coalescing, and the request as its caller made it.
    let transport: (any ImageLoader)?

    var key: DownloadKey { DownloadKey(request, transport: transport) }
}

/// A request the downloader refused before it started, and the URL it had then.
struct RefusedDownload: Error {
    let url: URL
    let error: WebImageError
}
