#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Downloads image bytes: one network request per URL however many callers ask, at most
/// ``ImageDownloaderConfiguration/maxConcurrentDownloads`` at once, in priority then FIFO/LIFO order.
///
/// Routes by scheme: http/https go through ``HTTPImageLoader`` (queued, coalesced); file and data
/// URLs go through the library's file and `data:` loaders (coalesced but not queued: they take
/// no slot and ignore ``suspend()``). As an ``ImageLoader`` it is the manager's default loader.
/// It is where a manager's loads are coalesced: their decode stages join its downloads, with
/// the same key as a direct ``download(_:options:)``, and a custom ``ImageLoader`` given to the
/// manager (or a load's context) runs under the manager's downloader, in its queue.
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

    /// Creates a downloader. It shares ``HTTPImageLoader/shared``'s connection pool unless its
    /// configuration asks for one of its own (certificate, trust, address-policy or connection
    /// settings; then call ``shutdown()`` when done).
    public init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration()) {
        coordinator = DownloadCoordinator(configuration: configuration)
    }

    /// Whether `url` is http, https, file or data (or `local`, with ``ImageDownloaderConfiguration/localRoot``;
    /// or `s3`, with ``ImageDownloaderConfiguration/s3``).
    public func canLoad(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased() ?? ""
        return ["http", "https", "file", "data"].contains(scheme) || (scheme == "local" && coordinator.local != nil)
            || (scheme == "s3" && configuration.s3 != nil)
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
    public func download(_ request: ImageLoadRequest, options: ImageDownloader.Options = ImageDownloader.Options()) -> ImageDownloader.Token {
        coordinator.download(request, options: options)
    }

    /// Starts (or joins) a download that reports to handlers rather than a stream, like
    /// SDWebImage's `downloadImage(with:options:progress:completed:)`.
    ///
    /// `progress` gets the bytes received so far and the expected total, if known; `completion`
    /// runs exactly once, with the body (or a 304's response) or the error, including
    /// ``WebImageError/cancelled`` after ``ImageDownloader/Token/cancel()``. Both run on the thread that
    /// produced the event (an event loop, for http), so they must return quickly and not block:
    /// hand longer work to a task or a queue. No thread hop stands between the network and the
    /// handler, which makes this the cheapest way to take many downloads.
    ///
    /// The handlers may call back into the downloader (cancel this or another download, start
    /// one). A request refused at once (vetoed by a request modifier, an unsupported scheme)
    /// completes before this returns. A caller that joins a running download hears of its
    /// progress from then on.
    ///
    /// The returned token cancels and re-prioritises like any other; its ``ImageDownloader/Token/events``
    /// stream is empty. `options.reportsProgress` is ignored: passing `progress` asks for it.
    @discardableResult
    public func download(_ request: ImageLoadRequest, options: ImageDownloader.Options = ImageDownloader.Options(),
                         progress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                         completion: @escaping @Sendable (Result<ImageDownloader.Outcome, WebImageError>) -> Void) -> ImageDownloader.Token {
        coordinator.download(request, options: options, progress: progress, completion: completion)
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
    public func events() -> AsyncStream<ImageDownloader.Event> { coordinator.events() }

    /// How the downloader's HTTP connections were used, by origin (`scheme://host[:port]`):
    /// connections opened and reused, requests sent. A downloader without a pool of its own
    /// shares ``HTTPImageLoader/shared``'s, and its counts. Past 256 origins, new ones are counted
    /// together under `"other"`, so hosts a hostile page names cannot grow the table without bound.
    public func connectionMetrics() -> [String: ImageDownloader.ConnectionMetrics] {
        coordinator.http.connectionMetrics()
    }

    /// Cancels everything and closes the downloader's own HTTP client, if it has one.
    public func shutdown() async throws { try await coordinator.shutdown() }
}
