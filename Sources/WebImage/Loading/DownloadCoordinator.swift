#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization
import WebImageHTTP

/// The coordination state of an ``ImageDownloader``: coalescing, the queue, slots.
///
/// Requests for the same download (``DownloadKey``) join one ``SharedWork``, as the pipeline's
/// stages and the cache's reads do: the download is queued at the highest priority among its
/// callers, a late joiner is first replayed the last response and progress, and the download
/// is cancelled when its last caller leaves. Callers join with callback sinks
/// (``SharedWorkSink/download(_:)`` and ``SharedWorkSink/download(progress:completion:)``), so
/// events go from the connection's event loop straight to them, with no task or stream in
/// between; the manager's decode stages join with a stream of their own
/// (``subscribe(_:priority:accepts:)``): the downloader is the one place a load's bytes are
/// coalesced. This type keeps only the queue: which downloads wait, which run, in which slot.
///
/// A download may run through a custom ``ImageLoader`` (its ``PreparedDownload/transport``)
/// instead of the loaders chosen by scheme: it then takes a slot like any network load.
///
/// The queue lives in one lock-protected ``State``. Tasks are started or cancelled and user
/// closures called only after the lock is released: starting a task can wake a thread with a
/// system call, and a closure may come back in here. The coordinator's lock may be held while
/// a work's lock is taken (to read its priority), never the other way round.
final class DownloadCoordinator: Sendable {
    enum Phase { case queued, running }

    struct Download {
        let request: ImageLoadRequest
        let usesSlot: Bool
        let transport: (any ImageLoader)?
        /// The callers' shared work: it ends when the download does.
        let work: SharedWork<DownloadOutcome>
        var phase: Phase = .queued
        /// How to stop the download once it runs (see ``DownloadTaskSlot``).
        let task = DownloadTaskSlot()
        var startedAt: ContinuousClock.Instant?
    }

    struct State {
        var downloads: [Int: Download] = [:]
        var runningSlots = 0
        var suspended = false
        /// Queued slot-taking downloads.
        var queue = PriorityWaitList()
        var nextDownloadID = 0
    }

    /// Work to do once the lock is released.
    typealias Effects = [@Sendable () -> Void]

    // The queue: see the type's comment for the locking rules.
    private let state = Locked(State())
    // The running downloads by key, which a request for the same download joins.
    private let works = SharedWorkPool<DownloadKey>()
    // Observers of `events()`, by subscription number.
    private let subscribers = Locked([Int: AsyncStream<DownloaderEvent>.Continuation]())
    private let subscriberIDs = Atomic<Int>(0)
    // How many observers there are: most downloaders have none, and then an event is not even built.
    private let subscriberCount = Atomic<Int>(0)

    let configuration: ImageDownloaderConfiguration
    let http: HTTPImageLoader
    let ownsHTTPLoader: Bool
    let file: FileImageLoader
    /// `local:///PATH` inside ``ImageDownloaderConfiguration/localRoot``, if set.
    let local: FileImageLoader?
    let dataURLs = DataURLLoader()
    let cookies: CookieJar
    /// What every HTTP load of this downloader is given: made once, not per download.
    let httpHooks: HTTPLoadHooks
    let metrics = DownloadMetrics()
    let logger = Logger(label: "swift-webimage.downloader")

    init(configuration: ImageDownloaderConfiguration) {
        self.configuration = configuration
        // The shared pool serves every downloader whose pool settings are the shared pool's; loads' settings
        // travel with each load (`httpHooks`).
        let shared = HTTPImageLoader.shared
        var pool = configuration.http
        pool.maxConnectionsPerHost = shared.configuration.maxConnectionsPerHost
        if configuration.maxConnectionsPerHost != nil || !pool.hasSamePoolSettings(as: shared.configuration) {
            pool.maxConnectionsPerHost = max(configuration.maxConnectionsPerHost ?? configuration.maxConcurrentDownloads, 1)
            http = HTTPImageLoader(configuration: pool)
            ownsHTTPLoader = true
        } else {
            http = shared
            ownsHTTPLoader = false
        }
        file = FileImageLoader(maxBodySize: configuration.maxBodySize)
        local = configuration.localRoot.map { FileImageLoader(maxBodySize: configuration.maxBodySize, root: LocalRoot(directory: $0)) }
        let cookies = CookieJar()
        self.cookies = cookies
        httpHooks = Self.makeHTTPHooks(configuration, cookies: cookies)
    }

    // MARK: Callers

    func download(_ original: ImageLoadRequest, options: DownloadOptions) -> DownloadToken {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let sink = SharedWorkSink<DownloadOutcome>.download(continuation, options: options)
        let (url, waiter) = enqueue(original, options: options, sink: sink)
        // Set once the caller has a place; no one can end the stream before it is returned.
        if let waiter {
            continuation.onTermination = { termination in
                if case .cancelled = termination { waiter.cancel() }
            }
        }
        return DownloadToken(events: stream, url: url, waiter: waiter)
    }

    func download(_ original: ImageLoadRequest, options: DownloadOptions,
                  progress: (@Sendable (Int64, Int64?) -> Void)?,
                  completion: @escaping @Sendable (Result<DownloadOutcome, WebImageError>) -> Void) -> DownloadToken {
        let sink = SharedWorkSink<DownloadOutcome>.download(options: options, progress: progress, completion: completion)
        let (url, waiter) = enqueue(original, options: options, sink: sink)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        continuation.finish()
        return DownloadToken(events: stream, url: url, waiter: waiter)
    }

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
        if request.timeout == nil { request.timeout = configuration.timeout }
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
        case .failure(let refused): return (refuse(refused.url, refused.error, sink: sink), nil)
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

    /// Fails a caller whose request never started.
    private func refuse(_ url: URL, _ error: WebImageError, sink: SharedWorkSink<DownloadOutcome>) -> URL {
        sink.finish(.failure(error))
        metrics.failure(error)
        emit(.failed(url, error))
        return url
    }

    /// Queues a new download (or starts it, for file and data URLs) and ties it to its callers' work.
    private func begin(_ work: SharedWork<DownloadOutcome>, _ download: PreparedDownload) {
        var effects: Effects = []
        let request = download.request
        let id = state.withLock { state -> Int in
            let id = state.nextDownloadID
            state.nextDownloadID += 1
            state.downloads[id] = Download(request: request, usesSlot: download.usesSlot, transport: download.transport, work: work)
            if download.usesSlot {
                state.queue.append(id, priority: request.priority)
                pump(&state, effects: &effects)
            } else {
                // File and data URLs are local and cheap: they take no slot and ignore suspension.
                start(id, in: &state, effects: &effects)
            }
            return id
        }
        work.onPriorityChange { [weak self] _ in self?.requeue(id) }
        work.onStop { [weak self] in self?.cancel(id) }
        // A caller may have joined, and raised the priority, before the handler was there.
        requeue(id)
        for effect in effects { effect() }
    }

    /// Moves a queued download to its callers' highest priority now (a running one has left the
    /// queue). Reads the priority under the lock, so changes that race leave the latest.
    private func requeue(_ id: Int) {
        state.withLock { state in
            guard state.queue.contains(id), let work = state.downloads[id]?.work else { return }
            state.queue.setPriority(work.priority, of: id)
        }
    }

    /// The download's last caller left: forget and stop it.
    private func cancel(_ id: Int) {
        var effects: Effects = []
        state.withLock { state in
            removeDownload(id, in: &state, effects: &effects, cancelled: true)
            pump(&state, effects: &effects)
        }
        for effect in effects { effect() }
    }

    // MARK: Queue

    func suspend() { state.withLock { $0.suspended = true } }

    func resume() {
        var effects: Effects = []
        state.withLock { state in
            state.suspended = false
            pump(&state, effects: &effects)
        }
        for effect in effects { effect() }
    }

    var isSuspended: Bool { state.withLock { $0.suspended } }

    var runningCount: Int { state.withLock { $0.downloads.values.filter { $0.phase == .running }.count } }

    var queuedCount: Int { state.withLock { $0.queue.count } }

    func cancelAll() {
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

    /// Starts queued downloads while slots are free. Call with the lock held; `effects` start
    /// the tasks after unlocking.
    private func pump(_ state: inout State, effects: inout Effects) {
        let limit = max(1, configuration.maxConcurrentDownloads)
        let lifo = configuration.executionOrder == .lifo
        while !state.suspended && state.runningSlots < limit, let next = state.queue.popNext(lifo: lifo) {
            state.runningSlots += 1
            start(next, in: &state, effects: &effects)
        }
    }

    /// Marks a download running; one of `effects` starts it once the lock is released.
    /// Starting may wake a thread with a system call: under the lock, that made every other
    /// download's event wait (and spin) for it.
    private func start(_ id: Int, in state: inout State, effects: inout Effects) {
        guard let download = state.downloads[id] else { return }
        state.downloads[id]?.phase = .running
        state.downloads[id]?.startedAt = .now
        let slot = download.task, work = download.work
        if let transport = download.transport {
            // The custom loader starts at the priority its callers have now, not when they queued.
            var request = download.request
            request.priority = work.priority
            effects.append { [self, request] in run(id, request, through: transport, in: slot, work: work) }
        } else {
            let request = download.request
            effects.append { [self] in run(id, request, in: slot, work: work) }
        }
    }

    /// Forgets a download; cancels its task. Call with the lock held; `effects` run after unlocking.
    private func removeDownload(_ id: Int, in state: inout State, effects: inout Effects, cancelled: Bool) {
        guard let download = state.downloads.removeValue(forKey: id) else { return }
        if download.phase == .queued { state.queue.remove(id) }
        if download.phase == .running && download.usesSlot { state.runningSlots -= 1 }
        if cancelled {
            let slot = download.task
            let url = download.request.url
            effects.append { [self] in
                slot.cancel()
                metrics.cancellations.increment()
                logger.debug("download cancelled", metadata: ["url": "\(url)"])
                emit(.cancelled(url))
            }
        }
    }

    // MARK: Network task

    private func run(_ id: Int, _ request: ImageLoadRequest, in slot: DownloadTaskSlot, work: SharedWork<DownloadOutcome>) {
        let url = request.url
        metrics.requests.increment()
        emit(.started(url))
        logger.debug("download started", metadata: ["url": "\(url)"])
        switch url.scheme?.lowercased() {
        case "file", "data", "local":
            slot.start { [self] in
                do {
                    let stream = url.isFileURL ? file.load(request)
                        : LocalRoot.isLocal(url) ? (local ?? file).load(request) : dataURLs.load(request)
                    for try await event in stream { try handle(event, of: id, work: work) }
                    ended(id, .failure(Task.isCancelled ? .cancelled : .connectionFailed("load ended without a result")))
                } catch {
                    ended(id, .failure(.fromLoading(error)))
                }
            }
        default:
            var request = request
            if let s3 = configuration.s3, S3Configuration.isS3(url) {
                // Signed now, as it goes out: a signature made when it was queued could expire in the queue.
                do { request = try s3.signed(request) } catch { return ended(id, .failure(error)) }
            }
            // Events go from the connection's event loop straight to the callers: no task, no stream.
            let transfer = http.makeTransfer(request, hooks: httpHooks) { [self] event in
                try handle(event, of: id, work: work)
            }
            slot.attach { transfer.cancel() }
            transfer.start { [self] result in ended(id, result) }
        }
    }

    /// Runs a download through a custom loader. Once running it has left the queue, so its
    /// callers' priority changes go to the loader's handle from then on.
    private func run(_ id: Int, _ request: ImageLoadRequest, through transport: any ImageLoader,
                     in slot: DownloadTaskSlot, work: SharedWork<DownloadOutcome>) {
        metrics.requests.increment()
        emit(.started(request.url))
        logger.debug("download started", metadata: ["url": "\(request.url)"])
        let load = transport.start(request)
        // The last priority the loader was told, so each change reaches it once.
        let told = Locked(request.priority)
        let follow: @Sendable (LoadPriority) -> Void = { priority in
            let changed = told.withLock { told -> Bool in
                guard told != priority else { return false }
                told = priority
                return true
            }
            if changed { load.setPriority(priority) }
        }
        work.onPriorityChange(follow)
        // A change between the start and the handler.
        follow(work.priority)
        slot.start { [self] in
            do {
                for try await event in load.events { try handle(event, of: id, work: work, screened: false) }
                // A custom loader's stream ends without a result only when its load was cancelled.
                ended(id, .failure(.cancelled))
            } catch {
                ended(id, .failure(.fromLoading(error)))
            }
        }
    }

    /// The loader is done: a success already completed the download with its final event.
    private func ended(_ id: Int, _ result: Result<Void, WebImageError>) {
        switch result {
        case .success:
            // A no-op when the final event completed the download, as it does.
            complete(id, .failure(.connectionFailed("load ended without a result")), bytes: 0)
        case .failure(let error):
            complete(id, .failure(error), bytes: 0)
        }
    }

    /// Passes one loader event on to the download's callers; the final event completes it.
    /// `screened`: whether the downloader's response modifier sees the response (not for a
    /// custom loader's loads, which are their callers' as they made them).
    private func handle(_ event: ImageLoadEvent, of id: Int, work: SharedWork<DownloadOutcome>, screened: Bool = true) throws {
        switch event {
        case .response(let response):
            if screened, let modifier = configuration.responseModifier, !modifier(response) {
                throw WebImageError.rejected("response modifier rejected \(response.url.absoluteString)")
            }
            // Callers' response modifiers run before anyone gets the response.
            work.send(response: response, rejection: .rejected("response modifier rejected \(response.url.absoluteString)"))
            emit(.responseReceived(response.url, statusCode: response.statusCode))
        case .progress(let received, let expected):
            work.send(.progress(received: received, expected: expected))
        case .partialData(let data):
            work.send(.partialData(data))
        case .completed(let data, let response):
            metrics.bytes.increment(by: Int64(data.count))
            complete(id, .success(.data(data, response)), bytes: data.count)
        case .notModified(let response):
            complete(id, .success(.notModified(response)), bytes: 0)
        }
    }

    private func complete(_ id: Int, _ result: Result<DownloadOutcome, WebImageError>, bytes: Int) {
        var effects: Effects = []
        let finished = state.withLock { state -> Download? in
            guard let download = state.downloads[id] else { return nil }
            removeDownload(id, in: &state, effects: &effects, cancelled: false)
            pump(&state, effects: &effects)
            return download
        }
        // The next queued download starts before this one's callers hear of it.
        for effect in effects { effect() }
        guard let download = finished else { return }
        download.work.finish(result.mapError { $0 })
        let url = download.request.url
        if let startedAt = download.startedAt {
            metrics.duration.recordNanoseconds(Int64((ContinuousClock.now - startedAt) / .nanoseconds(1)))
        }
        switch result {
        case .success:
            logger.debug("download finished", metadata: ["url": "\(url)", "bytes": "\(bytes)"])
            emit(.finished(url, bytes: bytes))
        case .failure(let error):
            metrics.failure(error)
            logger.debug("download failed", metadata: ["url": "\(url)", "error": "\(error)"])
            emit(.failed(url, error))
        }
    }

    // MARK: Observers

    func events() -> AsyncStream<DownloaderEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloaderEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        let id = subscriberIDs.add(1, ordering: .relaxed).newValue
        continuation.onTermination = { [self] _ in
            if subscribers.withLock({ $0.removeValue(forKey: id) }) != nil { subscriberCount.subtract(1, ordering: .relaxed) }
        }
        subscribers.withLock { $0[id] = continuation }
        subscriberCount.add(1, ordering: .relaxed)
        return stream
    }

    private func emit(_ event: @autoclosure () -> DownloaderEvent) {
        guard subscriberCount.load(ordering: .relaxed) > 0 else { return }
        let event = event()
        let targets = subscribers.withLock { Array($0.values) }
        for target in targets { target.yield(event) }
    }

    func shutdown() async throws {
        cancelAll()
        if ownsHTTPLoader { try await http.shutdown() }
    }
}
