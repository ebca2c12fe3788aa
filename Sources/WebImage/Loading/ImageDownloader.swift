#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization
import WebImageHTTP

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
///
/// Requests for the same download (the same URL, headers and validators) join one piece of shared work, as the pipeline's
/// stages and the cache's reads do: the download is queued at the highest priority among its
/// callers, and cancelled when its last caller leaves. Callers join with callback sinks, so
/// events go from the connection's event loop straight to them, with no task or stream in
/// between; the manager's decode stages join with a stream of their own
/// (`subscribe(_:priority:accepts:)`). The queue (which downloads wait, which run, in which
/// slot) is in `ImageDownloader+Queue.swift`.
public final class ImageDownloader: ImageLoader {
    /// The process-wide downloader with the default configuration.
    public static let shared = ImageDownloader()

    /// The configuration the downloader was made with.
    public let configuration: ImageDownloaderConfiguration

    // The queue: see `ImageDownloader+Queue.swift` for its locking rules.
    let state = Locked(QueueState())
    // The running downloads by key, which a request for the same download joins.
    let works = SharedWorkPool<DownloadKey>()
    // Observers of `events()`, by subscription number.
    private let subscribers = Locked([Int: AsyncStream<DownloaderEvent>.Continuation]())
    private let subscriberIDs = Atomic<Int>(0)
    // How many observers there are: most downloaders have none, and then an event is not even built.
    private let subscriberCount = Atomic<Int>(0)

    let http: HTTPImageLoader
    private let ownsHTTPLoader: Bool
    /// `s3://` requests' own connections and rules, with ``ImageDownloaderConfiguration/s3``.
    let s3: S3Transport?
    let file: FileImageLoader
    /// `local:///PATH` inside ``ImageDownloaderConfiguration/localRoot``, if set.
    let local: FileImageLoader?
    let dataURLs = DataURLLoader()
    /// What every HTTP load of this downloader is given: made once, not per download.
    let httpHooks: HTTPLoadHooks
    let metrics = DownloadMetrics()
    let logger = Logger(label: "swift-webimage.downloader")

    /// Creates a downloader. It shares ``HTTPImageLoader/shared``'s connection pool unless its
    /// configuration asks for one of its own (certificate, trust, address-policy or connection
    /// settings, or ``ImageDownloaderConfiguration/s3``, whose requests have a pool of their own;
    /// then call ``shutdown()`` when done).
    public init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration()) {
        self.configuration = configuration
        // The shared pool serves every downloader whose pool settings are the shared pool's; loads' settings
        // travel with each load (`httpHooks`).
        let shared = HTTPImageLoader.shared
        var pool = configuration.http
        let perHost = pool.maxConnectionsPerHost
        pool.maxConnectionsPerHost = shared.configuration.maxConnectionsPerHost
        if perHost != nil || !pool.hasSamePoolSettings(as: shared.configuration) {
            pool.maxConnectionsPerHost = configuration.ownPoolConnectionsPerHost
            http = HTTPImageLoader(configuration: pool)
            ownsHTTPLoader = true
        } else {
            http = shared
            ownsHTTPLoader = false
        }
        file = FileImageLoader(maxBodySize: configuration.maxBodySize)
        local = configuration.localRoot.map { FileImageLoader(maxBodySize: configuration.maxBodySize, root: LocalRoot(directory: $0)) }
        httpHooks = Self.makeHTTPHooks(configuration, cookies: CookieJar())
        s3 = configuration.s3.map { S3Transport(configuration, s3: $0) }
    }

    /// Whether `url` is http, https, file or data (or `local`, with ``ImageDownloaderConfiguration/localRoot``;
    /// or `s3`, with ``ImageDownloaderConfiguration/s3``).
    public func canLoad(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased() ?? ""
        return ["http", "https", "file", "data"].contains(scheme) || (scheme == "local" && local != nil)
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
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let sink = SharedWorkSink<DownloadOutcome>.download(continuation, options: options)
        let (url, waiter) = enqueue(request, options: options, sink: sink)
        // Set once the caller has a place; no one can end the stream before it is returned.
        if let waiter {
            continuation.onTermination = { termination in
                if case .cancelled = termination { waiter.cancel() }
            }
        }
        return DownloadToken(events: stream, url: url, waiter: waiter)
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
        let sink = SharedWorkSink<DownloadOutcome>.download(options: options, progress: progress, completion: completion)
        let (url, waiter) = enqueue(request, options: options, sink: sink)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        continuation.finish()
        return DownloadToken(events: stream, url: url, waiter: waiter)
    }

    /// Stops starting queued downloads (running ones continue).
    public func suspend() { state.withLock { $0.suspended = true } }

    /// Starts queued downloads again.
    public func resume() {
        var effects: Effects = []
        state.withLock { state in
            state.suspended = false
            pump(&state, effects: &effects)
        }
        for effect in effects { effect() }
    }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { state.withLock { $0.suspended } }

    /// Cancels every queued and running download; every caller's stream ends with ``WebImageError/cancelled``.
    public func cancelAll() {
        var effects: Effects = []
        let works = state.withLock { state -> [SharedWork<DownloadOutcome>] in
            let works = state.downloads.values.map(\.work)
            for id in Array(state.downloads.keys) {
                removeDownload(id, in: &state, effects: &effects, cancelled: true)
            }
            return works
        }
        for work in works { work.finish(.failure(WebImageError.cancelled)) }
        for effect in effects { effect() }
    }

    /// How many downloads are running now.
    public var runningDownloadCount: Int { state.withLock { $0.downloads.values.filter { $0.phase == .running }.count } }

    /// How many downloads wait in the queue.
    public var queuedDownloadCount: Int { state.withLock { $0.queue.count } }

    /// A stream of what the downloader does (started, response, finished, failed, cancelled).
    public func events() -> AsyncStream<ImageDownloader.Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloaderEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        let id = subscriberIDs.add(1, ordering: .relaxed).newValue
        continuation.onTermination = { [self] _ in
            if subscribers.withLock({ $0.removeValue(forKey: id) }) != nil { subscriberCount.subtract(1, ordering: .relaxed) }
        }
        subscribers.withLock { $0[id] = continuation }
        subscriberCount.add(1, ordering: .relaxed)
        return stream
    }

    /// Tells the observers of ``events()``; builds the event only when there are some.
    func emit(_ event: @autoclosure () -> DownloaderEvent) {
        guard subscriberCount.load(ordering: .relaxed) > 0 else { return }
        let event = event()
        let targets = subscribers.withLock { Array($0.values) }
        for target in targets { target.yield(event) }
    }

    /// How the downloader's HTTP connections were used, by origin (`scheme://host[:port]`):
    /// connections opened and reused, requests sent. A downloader without a pool of its own
    /// shares ``HTTPImageLoader/shared``'s, and its counts. Past 256 origins, new ones are counted
    /// together under `"other"`, so hosts a hostile page names cannot grow the table without bound.
    /// S3 reads and writes are counted under their store's origin (their own connections, `S3Transport`).
    public func connectionMetrics() -> [String: ConnectionCounts] {
        guard let s3 else { return http.connectionMetrics() }
        return http.connectionMetrics().merging(s3.loader.connectionMetrics(), uniquingKeysWith: +)
    }

    /// The hooks and connections an HTTP load of `url` goes out with: S3's own for an `s3://` URL
    /// (``ImageDownloaderConfiguration/s3``), the downloader's for the rest.
    func route(for url: URL) -> (hooks: HTTPLoadHooks, session: HTTPSession) {
        if let s3, S3Configuration.isS3(url) { return (s3.hooks, s3.loader.session) }
        return (httpHooks, http.session)
    }

    /// Cancels everything and closes the downloader's own HTTP clients, if it has any.
    public func shutdown() async throws {
        cancelAll()
        if ownsHTTPLoader { try await http.shutdown() }
        try await s3?.loader.shutdown()
    }

    // MARK: The pipeline's entry points


    /// Shapes `original` as the downloader sends it: the downloader's request modifier, then
    /// `modifier`, then the default timeouts; routes it by scheme. A request for a `transport`
    /// is the custom loader's as its caller made it (only `modifier` applies) and always takes
    /// a slot. Fails with the URL the request had when it was refused.
    func prepare(_ original: ImageLoadRequest, modifier: DownloadRequestModifier?,
                 transport: (any ImageLoader)? = nil) -> Result<PreparedDownload, RefusedDownload> {
        var request = original
        let modifiers = transport == nil ? [configuration.requestModifier, modifier] : [modifier]
        for modifier in modifiers.compactMap({ $0 }) {
            guard let modified = modifier(request) else {
                return .failure(RefusedDownload(url: request.url, error: .rejected("request modifier vetoed \(request.url.absoluteString)")))
            }
            request = modified
        }
        if let transport { return .success(PreparedDownload(request: request, usesSlot: true, transport: transport)) }
        if request.timeout == nil { request.timeout = configuration.idleTimeout }
        if request.resourceTimeout == nil { request.resourceTimeout = configuration.resourceTimeout }
        let usesSlot: Bool
        switch request.url.scheme?.lowercased() {
        case "http", "https": usesSlot = true
        case "file", "data": usesSlot = false
        case "local" where local != nil: usesSlot = false
        case "s3" where configuration.s3 != nil: usesSlot = true
        default: return .failure(RefusedDownload(url: request.url, error: .invalidURL(request.url.absoluteString)))
        }
        return .success(PreparedDownload(request: request, usesSlot: usesSlot, transport: nil))
    }

    /// Starts or joins `download` for a caller that reads an event stream of its own (the
    /// manager's decode stage). `accepts` screens the response for this caller alone: one it
    /// refuses fails this caller with ``WebImageError/rejected(_:)``.
    func subscribe(_ download: PreparedDownload, priority: LoadPriority,
                   accepts: DownloadResponseModifier?) -> SharedWorkSubscription<DownloadOutcome> {
        let (subscription, isNew) = works.subscribe(key: download.key, priority: priority, accepts: accepts) { work in
            // Begun from a task, as the pipeline's former fetch stage began it: loads started together
            // that are still finishing their cache queries join before the request goes out.
            // A last caller leaving first stops it all the same (`onStop` runs when attached).
            Task.detached(priority: work.priority.taskPriority) { [self] in begin(work, download) }
        }
        if !isNew { joined(download.request.url) }
        return subscription
    }

    /// Starts or joins the download of `original` for a caller whose events go to `sink`;
    /// returns the URL after the request modifiers and the caller's place (`nil` for a request
    /// refused before it starts, whose sink is finished at once).
    private func enqueue(_ original: ImageLoadRequest, options: DownloadOptions,
                         sink: SharedWorkSink<DownloadOutcome>) -> (URL, SharedWorkWaiter<DownloadOutcome>?) {
        let download: PreparedDownload
        switch prepare(original, modifier: options.requestModifier) {
        case .success(let prepared): download = prepared
        case .failure(let refused):
            // Fails a caller whose request never started.
            sink.finish(.failure(refused.error))
            metrics.failure(refused.error)
            emit(.failed(refused.url, refused.error))
            return (refused.url, nil)
        }
        let (waiter, isNew) = works.join(key: download.key, priority: download.request.priority, sink: sink) { work in
            begin(work, download)
        }
        if !isNew { joined(download.request.url) }
        return (download.request.url, waiter)
    }

    private func joined(_ url: URL) {
        metrics.coalescedJoins.increment()
        logger.trace("joined running download", metadata: ["url": "\(url)"])
    }
}
