#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

// The downloader's queue: which downloads wait, which run, in which slot, and how each runs.
//
// A download may run through a custom ``ImageLoader`` (its ``PreparedDownload/transport``)
// instead of the loaders chosen by scheme: it then takes a slot like any network load.
//
// The queue lives in one lock-protected ``ImageDownloader/QueueState``. Tasks are started or
// cancelled and user closures called only after the lock is released: starting a task can wake
// a thread with a system call, and a closure may come back in here. The downloader's lock may
// be held while a work's lock is taken (to read its priority), never the other way round.
extension ImageDownloader {
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

    struct QueueState {
        var downloads: [Int: Download] = [:]
        var runningSlots = 0
        var suspended = false
        /// Queued slot-taking downloads.
        var queue = PriorityWaitList()
        var nextDownloadID = 0
    }

    /// Work to do once the lock is released.
    typealias Effects = [@Sendable () -> Void]

    /// Queues a new download (or starts it, for file and data URLs) and ties it to its callers' work.
    func begin(_ work: SharedWork<DownloadOutcome>, _ download: PreparedDownload) {
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

    /// Starts queued downloads while slots are free. Call with the lock held; `effects` start
    /// the tasks after unlocking.
    func pump(_ state: inout QueueState, effects: inout Effects) {
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
    private func start(_ id: Int, in state: inout QueueState, effects: inout Effects) {
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
    func removeDownload(_ id: Int, in state: inout QueueState, effects: inout Effects, cancelled: Bool) {
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
            let connections = route(for: url)
            // Events go from the connection's event loop straight to the callers: no task, no stream.
            let transfer = HTTPTransfer(request, hooks: connections.hooks, session: connections.session) { [self] event in
                try handle(event, of: id, work: work)
            }
            slot.attach { transfer.cancel() }
            transfer.start { [self] result in ended(id, result.mapError(WebImageError.init)) }
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

}
