import Foundation

/// Downloads image bytes: one network request per URL however many callers ask, at most
/// ``ImageDownloaderConfiguration/maxConcurrentDownloads`` at once, in priority then FIFO/LIFO order.
///
/// Routes by scheme: http/https go through ``HTTPImageLoader`` (queued, coalesced); file and data
/// URLs go through ``FileImageLoader`` and ``DataURLLoader`` (coalesced but not queued: they take
/// no slot and ignore ``suspend()``). As an ``ImageLoader`` it is the manager's default loader.
///
/// Requests coalesce when their URL, headers and validators match (after the request modifiers).
/// Partial data is produced when the caller that started the download asked for it; callers who
/// join later get it from then on only if it was asked for. A late joiner first receives the last
/// response and progress seen, then every later event. Observe activity with ``events()``,
/// swift-metrics (`webimage_downloader_*`) and swift-log (label `swift-webimage.downloader`).
public final class ImageDownloader: ImageLoader {
    /// The process-wide downloader with the default configuration.
    public static let shared = ImageDownloader()

    /// The configuration the downloader was made with.
    public var configuration: ImageDownloaderConfiguration { coordinator.configuration }
    let coordinator: DownloadCoordinator

    /// Creates a downloader. It shares ``HTTPImageLoader/shared``'s connection pool unless
    /// `allowsInvalidCertificates` is set (then call ``shutdown()`` when done).
    public init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration()) {
        coordinator = DownloadCoordinator(configuration: configuration)
    }

    /// Whether `url` is http, https, file or data.
    public func canLoad(_ url: URL) -> Bool {
        ["http", "https", "file", "data"].contains(url.scheme?.lowercased() ?? "")
    }

    /// Starts (or joins) a download; the stream is this caller's own. Terminating it detaches the caller.
    public func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        download(request).events
    }

    /// Starts (or joins) a download; a priority change re-sorts it while it is queued.
    public func start(_ request: ImageLoadRequest) -> ImageLoadHandle {
        let token = download(request)
        return ImageLoadHandle(events: token.events, setPriority: { token.setPriority($0) })
    }

    /// Starts (or joins) a download and returns this caller's token.
    public func download(_ request: ImageLoadRequest, options: DownloadOptions = DownloadOptions()) -> DownloadToken {
        coordinator.download(request, options: options)
    }

    /// Stops starting queued downloads (running ones continue).
    public func suspend() { coordinator.suspend() }

    /// Starts queued downloads again.
    public func resume() { coordinator.resume() }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { coordinator.isSuspended }

    /// Cancels every queued and running download; every caller's stream ends with ``WebImageError/cancelled``.
    public func cancelAll() { coordinator.cancelAll() }

    /// How many downloads are running now.
    public var runningDownloadCount: Int { coordinator.runningCount }

    /// How many downloads wait in the queue.
    public var queuedDownloadCount: Int { coordinator.queuedCount }

    /// A stream of what the downloader does (started, response, finished, failed, cancelled).
    public func events() -> AsyncStream<DownloaderEvent> { coordinator.events() }

    /// Cancels everything and closes the downloader's own HTTP client, if it has one.
    public func shutdown() async throws { try await coordinator.shutdown() }
}
