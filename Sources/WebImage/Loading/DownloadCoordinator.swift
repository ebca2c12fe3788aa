#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization
import WebImageHTTP

/// The coordination state of an ``ImageDownloader``: coalescing, the queue, slots, callers.
///
/// Each download's callers follow the rules of all shared work (``SharedWorkWaiters``, as the
/// pipeline's stages and the cache's reads do through ``SharedWork``): the download is queued at
/// the highest priority among its callers, a late joiner is first replayed the last response
/// and progress, and the download is cancelled when its last caller leaves. The waiters live
/// under the same lock as the queue, so joining a download costs one lock, and events go from
/// the connection's event loop straight to the callers, with no task or stream in between.
///
/// Everything lives in one lock-protected ``State``. Rules that keep it deadlock-free:
/// events are yielded to callers' streams under the lock (so a caller joining late never sees
/// them out of order), but streams are *finished*, tasks started or cancelled and user closures
/// (response modifiers, a handler caller's progress and completion) called only after the lock
/// is released, because finishing a stream runs its `onTermination`, which
/// re-enters here, and starting a task can wake a thread with a system call.
final class DownloadCoordinator: Sendable {
    struct Caller {
        var sink: DownloadCallerSink
        var responseModifier: DownloadResponseModifier?
        /// Whether `.response` and `.progress` events go to this caller.
        var reportsProgress: Bool

        /// Whether `event` goes to this caller.
        func wants(_ event: ImageLoadEvent) -> Bool {
            switch event {
            case .response, .progress: reportsProgress
            case .partialData, .completed, .notModified: true
            }
        }
    }

    enum Phase { case queued, running }

    /// Set (under the coordinator's lock) once a caller that reports progress joins a download;
    /// until then the download's progress events are dropped where they arise, without taking
    /// the lock for each chunk. A progress event that raced a joiner counts as before the join.
    final class ProgressGate: Sendable {
        private let wanted = Atomic(false)
        var isOpen: Bool { wanted.load(ordering: .acquiring) }
        func open() { wanted.store(true, ordering: .releasing) }
    }

    struct Download {
        let id: Int
        let key: DownloadKey
        let request: ImageLoadRequest
        let usesSlot: Bool
        var phase: Phase = .queued
        /// The callers, by caller id; replay slot 0 keeps the last response, slot 1 the last progress.
        var waiters: SharedWorkWaiters<Caller, ImageLoadEvent>
        /// How to stop the download once it runs (see ``DownloadTaskSlot``).
        let task = DownloadTaskSlot()
        /// Whether any caller has asked for progress.
        let progressWanted = ProgressGate()
        var startedAt: ContinuousClock.Instant?
    }

    struct State {
        var downloads: [Int: Download] = [:]
        var byKey: [DownloadKey: Int] = [:]
        var downloadOfCaller: [Int: Int] = [:]
        var runningSlots = 0
        var suspended = false
        /// Queued slot-taking downloads.
        var queue = PriorityWaitList()
        var nextDownloadID = 0
    }

    /// Work to do once the lock is released.
    typealias Effects = [@Sendable () -> Void]

    // All coordination state: see the type's comment for the locking rules.
    private let state = Locked(State())
    private let callerIDs = Atomic<Int>(0)
    // Observers of `events()`, by subscription number.
    private let subscribers = Locked([Int: AsyncStream<DownloaderEvent>.Continuation]())
    private let subscriberIDs = Atomic<Int>(0)
    // How many observers there are: most downloaders have none, and then an event is not even built.
    private let subscriberCount = Atomic<Int>(0)

    let configuration: ImageDownloaderConfiguration
    let http: HTTPImageLoader
    let ownsHTTPLoader: Bool
    let file: FileImageLoader
    let dataURLs = DataURLLoader()
    let cookies: CookieJar
    /// What every HTTP load of this downloader is given: made once, not per download.
    let httpHooks: HTTPLoadHooks
    let metrics = DownloadMetrics()
    let logger = Logger(label: "swift-webimage.downloader")

    init(configuration: ImageDownloaderConfiguration) {
        self.configuration = configuration
        if configuration.allowsInvalidCertificates || !configuration.trustedCertificatesPEM.isEmpty
            || configuration.connectAddressPolicy != nil {
            http = HTTPImageLoader(configuration: .init(allowsInvalidCertificates: configuration.allowsInvalidCertificates,
                                                        maxConnectionsPerHost: max(configuration.maxConcurrentDownloads, 1),
                                                        trustedCertificatesPEM: configuration.trustedCertificatesPEM,
                                                        connectAddressPolicy: configuration.connectAddressPolicy))
            ownsHTTPLoader = true
        } else {
            http = HTTPImageLoader.shared
            ownsHTTPLoader = false
        }
        file = FileImageLoader(maxBodySize: configuration.maxBodySize)
        let cookies = CookieJar()
        self.cookies = cookies
        httpHooks = Self.makeHTTPHooks(configuration, cookies: cookies)
    }

    // MARK: Callers

    func download(_ original: ImageLoadRequest, options: DownloadOptions) -> DownloadToken {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let callerID = callerIDs.add(1, ordering: .relaxed).newValue
        continuation.onTermination = { [self] termination in
            if case .cancelled = termination { detach(callerID: callerID, error: .cancelled) }
        }
        let url = enqueue(original, options: options, callerID: callerID, sink: .stream(continuation),
                          reportsProgress: options.reportsProgress)
        return DownloadToken(events: stream, url: url, coordinator: self, callerID: callerID)
    }

    func download(_ original: ImageLoadRequest, options: DownloadOptions,
                  progress: (@Sendable (Int64, Int64?) -> Void)?,
                  completion: @escaping @Sendable (Result<DownloadOutcome, WebImageError>) -> Void) -> DownloadToken {
        let callerID = callerIDs.add(1, ordering: .relaxed).newValue
        let url = enqueue(original, options: options, callerID: callerID,
                          sink: .handlers(progress: progress, completion: completion), reportsProgress: progress != nil)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        continuation.finish()
        return DownloadToken(events: stream, url: url, coordinator: self, callerID: callerID)
    }

    /// Starts or joins the download of `original` for the caller `callerID`, whose events go to
    /// `sink`; returns the URL after the request modifiers. A request refused before it starts
    /// finishes the sink at once.
    private func enqueue(_ original: ImageLoadRequest, options: DownloadOptions, callerID: Int,
                         sink: DownloadCallerSink, reportsProgress: Bool) -> URL {
        var request = original
        for modifier in [configuration.requestModifier, options.requestModifier].compactMap({ $0 }) {
            guard let modified = modifier(request) else {
                return refuse(request.url, .rejected("request modifier vetoed \(request.url.absoluteString)"), sink: sink)
            }
            request = modified
        }
        if request.timeout == nil { request.timeout = configuration.timeout }
        if request.resourceTimeout == nil { request.resourceTimeout = configuration.resourceTimeout }
        let usesSlot: Bool
        switch request.url.scheme?.lowercased() {
        case "http", "https": usesSlot = true
        case "file", "data": usesSlot = false
        default: return refuse(request.url, .invalidURL(request.url.absoluteString), sink: sink)
        }

        let key = DownloadKey(request)
        let caller = Caller(sink: sink, responseModifier: options.responseModifier, reportsProgress: reportsProgress)
        var effects: Effects = []
        let joined = state.withLock { state -> Bool in
            if let id = state.byKey[key], let progressWanted = state.downloads[id]?.progressWanted {
                if caller.reportsProgress { progressWanted.open() }
                guard let join = state.downloads[id]?.waiters.join(callerID, priority: request.priority, sink: caller) else { return true }
                state.downloadOfCaller[callerID] = id
                if let raised = join.raised { requeue(id, at: raised, in: &state) }
                // A late joiner first gets what the others already saw, then every later event.
                // (Not a handler caller: its closure would run under the lock, and racing the
                // download's next event could make its progress go back.)
                guard case .stream = sink, caller.reportsProgress else { return true }
                for event in join.replay { sink.yield(event) }
                return true
            }
            let id = state.nextDownloadID
            state.nextDownloadID += 1
            var download = Download(id: id, key: key, request: request, usesSlot: usesSlot,
                                    waiters: SharedWorkWaiters(priority: request.priority, replaySlots: 2))
            _ = download.waiters.join(callerID, priority: request.priority, sink: caller)
            if caller.reportsProgress { download.progressWanted.open() }
            state.downloads[id] = download
            state.byKey[key] = id
            state.downloadOfCaller[callerID] = id
            if usesSlot {
                state.queue.append(id, priority: request.priority)
                pump(&state, effects: &effects)
            } else {
                // File and data URLs are local and cheap: they take no slot and ignore suspension.
                start(id, in: &state, effects: &effects)
            }
            return false
        }
        for effect in effects { effect() }
        if joined {
            metrics.coalescedJoins.increment()
            logger.trace("joined running download", metadata: ["url": "\(request.url)"])
        }
        return request.url
    }

    /// Fails a caller whose request never started.
    private func refuse(_ url: URL, _ error: WebImageError, sink: DownloadCallerSink) -> URL {
        sink.finish(error)
        metrics.failure(error)
        emit(.failed(url, error))
        return url
    }

    /// Removes one caller; the download is cancelled when it was the last.
    func detach(callerID: Int, error: WebImageError) {
        var effects: Effects = []
        let caller = state.withLock { state -> Caller? in
            guard let id = state.downloadOfCaller.removeValue(forKey: callerID),
                  let departure = state.downloads[id]?.waiters.leave(callerID) else { return nil }
            switch departure {
            case .last(let caller):
                removeDownload(id, in: &state, effects: &effects, cancelled: true)
                pump(&state, effects: &effects)
                return caller
            case .left(let caller, let lowered):
                if let lowered { requeue(id, at: lowered, in: &state) }
                return caller
            }
        }
        caller?.sink.finish(error)
        for effect in effects { effect() }
    }

    func setPriority(_ priority: LoadPriority, callerID: Int) {
        state.withLock { state in
            guard let id = state.downloadOfCaller[callerID],
                  let changed = state.downloads[id]?.waiters.setPriority(priority, of: callerID) else { return }
            requeue(id, at: changed, in: &state)
        }
    }

    /// Moves a queued download to its callers' new highest priority (a running one has left
    /// the queue). Call with the lock held.
    private func requeue(_ id: Int, at priority: LoadPriority, in state: inout State) {
        if state.queue.contains(id) { state.queue.setPriority(priority, of: id) }
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
        let callers = state.withLock { state -> [Caller] in
            let callers = state.downloads.values.flatMap { $0.waiters.waiters.values.map(\.sink) }
            for id in Array(state.downloads.keys) {
                removeDownload(id, in: &state, effects: &effects, cancelled: true)
            }
            return callers
        }
        for caller in callers { caller.sink.finish(.cancelled) }
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
        let request = download.request, slot = download.task, progress = download.progressWanted
        effects.append { [self] in run(id, request, in: slot, progress: progress) }
    }

    /// Forgets a download; cancels its task. Call with the lock held; `effects` run after unlocking.
    private func removeDownload(_ id: Int, in state: inout State, effects: inout Effects, cancelled: Bool) {
        guard let download = state.downloads.removeValue(forKey: id) else { return }
        if state.byKey[download.key] == id { state.byKey[download.key] = nil }
        if download.phase == .queued { state.queue.remove(id) }
        for callerID in download.waiters.waiters.keys { state.downloadOfCaller[callerID] = nil }
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

    private func run(_ id: Int, _ request: ImageLoadRequest, in slot: DownloadTaskSlot, progress: ProgressGate) {
        let url = request.url
        metrics.requests.increment()
        emit(.started(url))
        logger.debug("download started", metadata: ["url": "\(url)"])
        switch url.scheme?.lowercased() {
        case "file", "data":
            slot.start { [self] in
                do {
                    let stream = url.isFileURL ? file.load(request) : dataURLs.load(request)
                    for try await event in stream { try handle(event, of: id, progress: progress) }
                    ended(id, .failure(Task.isCancelled ? .cancelled : .connectionFailed("load ended without a result")))
                } catch {
                    ended(id, .failure(.fromLoading(error)))
                }
            }
        default:
            // Events go from the connection's event loop straight to the callers: no task, no stream.
            let transfer = http.makeTransfer(request, hooks: httpHooks) { [self] event in
                try handle(event, of: id, progress: progress)
            }
            slot.attach { transfer.cancel() }
            transfer.start { [self] result in ended(id, result) }
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
    private func handle(_ event: ImageLoadEvent, of id: Int, progress: ProgressGate) throws {
        switch event {
        case .response(let response):
            try accept(response, id)
        case .progress(let received, let expected):
            guard progress.isOpen else { return }
            deliver(event, to: id) { $0.waiters.remember(event, slot: 1) }
        case .partialData:
            deliver(event, to: id) { _ in }
        case .completed(let data, _):
            metrics.bytes.increment(by: Int64(data.count))
            complete(id, .success(event), bytes: data.count)
        case .notModified:
            complete(id, .success(event), bytes: 0)
        }
    }

    private func accept(_ response: ImageLoadResponse, _ id: Int) throws {
        if let modifier = configuration.responseModifier, !modifier(response) {
            throw WebImageError.rejected("response modifier rejected \(response.url.absoluteString)")
        }
        // Callers' response modifiers run before anyone gets the response, outside the lock. Most
        // downloads have none: then one locked step records and delivers it.
        let modifiers = state.withLock { state -> [(Int, DownloadResponseModifier)] in
            guard var download = state.downloads.removeValue(forKey: id) else { return [] }
            let modifiers = download.waiters.waiters.compactMap { entry in entry.value.sink.responseModifier.map { (entry.key, $0) } }
            // Handlers take no `.response` event: nothing is left to call after the lock.
            if modifiers.isEmpty { _ = Self.deliver(.response(response), in: &download) { $0.waiters.remember(.response(response), slot: 0) } }
            state.downloads[id] = download
            return modifiers
        }
        if !modifiers.isEmpty {
            for (callerID, modifier) in modifiers where !modifier(response) {
                detach(callerID: callerID, error: .rejected("response modifier rejected \(response.url.absoluteString)"))
            }
            deliver(.response(response), to: id) { $0.waiters.remember(.response(response), slot: 0) }
        }
        emit(.responseReceived(response.url, statusCode: response.statusCode))
    }

    private func deliver(_ event: ImageLoadEvent, to id: Int, update: (inout Download) -> Void) {
        let handlers = state.withLock { state -> [DownloadCallerSink] in
            // Taken out and put back so the update mutates in place (no copy of the callers).
            guard var download = state.downloads.removeValue(forKey: id) else { return [] }
            let handlers = Self.deliver(event, in: &download, update: update)
            state.downloads[id] = download
            return handlers
        }
        for handler in handlers { handler.yield(event) }
    }

    /// Updates `download` and yields `event` to its stream callers that want it; returns its
    /// handler callers that want it, whose closures must run after the lock is released. Call
    /// with the lock held.
    private static func deliver(_ event: ImageLoadEvent, in download: inout Download,
                                update: (inout Download) -> Void) -> [DownloadCallerSink] {
        update(&download)
        var handlers: [DownloadCallerSink] = []
        for caller in download.waiters.waiters.values.lazy.map(\.sink) where caller.wants(event) {
            if case .stream = caller.sink { caller.sink.yield(event) } else { handlers.append(caller.sink) }
        }
        return handlers
    }

    private func complete(_ id: Int, _ result: Result<ImageLoadEvent, WebImageError>, bytes: Int) {
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
        for caller in download.waiters.waiters.values.lazy.map(\.sink) {
            switch result {
            case .success(let event):
                caller.sink.yield(event)
                caller.sink.finish(nil)
            case .failure(let error):
                caller.sink.finish(error)
            }
        }
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

    private static func makeHTTPHooks(_ configuration: ImageDownloaderConfiguration, cookies: CookieJar) -> HTTPLoadHooks {
        let storeCookies: (@Sendable (URL, [String]) -> Void)?
        if configuration.cookiesEnabled {
            storeCookies = { url, values in cookies.store(setCookies: values, from: url) }
        } else {
            storeCookies = nil
        }
        var hooks = HTTPLoadHooks(
            defaultHeaders: DefaultRequestHeaders(configuration.headers),
            maxBodySize: configuration.maxBodySize,
            maxRedirects: configuration.maxRedirects,
            resourceTimeout: configuration.resourceTimeout,
            allowsInsecureRedirects: configuration.allowsInsecureRedirects,
            redirectPolicy: configuration.redirectPolicy,
            sameOriginHeaders: { url in
                // Most downloaders hold no credentials and (so far) no cookies.
                guard !configuration.credentials.isEmpty || (configuration.cookiesEnabled && !cookies.isEmpty) else { return [:] }
                var headers: [String: String] = [:]
                // Basic auth is the password in clear (base64): only over TLS unless opted in.
                if configuration.allowsCredentialsOverHTTP || url.scheme?.lowercased() == "https",
                   let credential = configuration.credentials[url.host?.lowercased() ?? ""] {
                    headers["Authorization"] = credential.authorizationHeader
                }
                if configuration.cookiesEnabled, let cookie = cookies.header(for: url) { headers["Cookie"] = cookie }
                return headers
            },
            didReceiveCookies: storeCookies)
        hooks.proxy = configuration.proxy.httpSettings
        hooks.retryPolicy = configuration.retryPolicy.map(\.httpPolicy)
        return hooks
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

/// What makes two requests the same download: the URL and everything that shapes the request.
struct DownloadKey: Hashable, Sendable {
    var url: String
    var headers: [String]
    var validators: CacheValidators?

    init(_ request: ImageLoadRequest) {
        url = request.url.absoluteString
        headers = request.headers.map { "\($0.key.lowercased()):\($0.value)" }.sorted()
        validators = request.validators
    }
}
