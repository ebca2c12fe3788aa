#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// What a piece of shared work tells the callers waiting for it.
package enum SharedWorkEvent<Value: Sendable>: Sendable {
    case response(ImageLoadResponse)
    case progress(received: Int64, expected: Int64?)
    case partialData(Data)
    case partialImage(DecodedImage)
    case value(Value)
}

/// One piece of work (download a URL, decode its bytes for the pipeline, apply a
/// transform prefix, read a cache entry) that every caller asking for the same key joins
/// instead of repeating.
///
/// The rules are ``SharedWorkWaiters``'s: the work runs once, at the highest priority of the
/// waiters still there; a late joiner first gets the last response and progress seen, then
/// every later event; when the last waiter leaves before the end, the work is stopped; the
/// result goes to every waiter. This type adds the lock, the stop action and the waiters'
/// sinks: callbacks (``join(priority:sink:)``, no task or stream per waiter: the downloader's
/// callers) or an event stream (``join(priority:)``: the pipeline's stages, the cache's reads).
/// The work runs as a task of its own (``start(_:)``) or elsewhere (``onStop(_:)`` and
/// ``finish(_:)``: the downloader's queue and the connection's event loop).
///
/// The lock guards the waiter table; only ordered sinks (a continuation's yield) are called
/// while it is held. Sinks finish, and handlers run, after it is released (a stream's
/// termination handler comes back into ``leave(_:error:)``, from a task of its own: a yield
/// under the lock may wait for the reader task's status lock, which a cancellation holds).
package final class SharedWork<Value: Sendable>: Sendable {
    typealias Sink = SharedWorkSink<Value>
    typealias Event = SharedWorkEvent<Value>

    private struct State {
        /// Replay slot 0 keeps the last response, slot 1 the last progress.
        var waiters: SharedWorkWaiters<Sink, Event>
        var nextID = 0
        var finished = false
        var priorityHandler: (@Sendable (LoadPriority) -> Void)?
    }

    private let state: Locked<State>
    /// How to stop the work when the last waiter leaves, remembered if that comes first.
    private let stopper = DownloadTaskSlot()
    /// Set once a waiter that wants progress joins: until then progress is dropped where it
    /// arises, without taking the lock for each chunk. A progress event that raced a joiner
    /// counts as before the join.
    private let progressWanted = Atomic(false)
    private let onEnd: @Sendable (SharedWork<Value>) -> Void

    init(priority: LoadPriority, onEnd: @escaping @Sendable (SharedWork<Value>) -> Void = { _ in }) {
        self.state = Locked(State(waiters: SharedWorkWaiters(priority: priority, replaySlots: 2)))
        self.onEnd = onEnd
    }

    /// The priority the work should run at now.
    var priority: LoadPriority { state.withLock { $0.waiters.priority } }

    /// How many callers wait.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Whether any waiter has asked for progress (so that it is worth sending).
    var wantsProgress: Bool { progressWanted.load(ordering: .acquiring) }

    /// Adds a waiter whose events go to `sink`, or returns `nil` when the work already ended.
    /// An ordered sink is first replayed what a late joiner is owed.
    func join(priority: LoadPriority, sink: Sink) -> SharedWorkWaiter<Value>? {
        let joined: (id: Int, raised: LoadPriority?)? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            if sink.wantsProgress { progressWanted.store(true, ordering: .releasing) }
            let (replay, raised) = state.waiters.join(id, priority: priority, sink: sink)
            if sink.ordered {
                for event in replay where sink.wants(event) { sink.receive(event) }
            }
            // Before the work registers its handler, a raise reaches no one: it starts at the new priority.
            return (id, raised)
        }
        guard let joined else { return nil }
        if let raised = joined.raised { notifyPriority(raised) }
        return SharedWorkWaiter(work: self, id: joined.id)
    }

    /// Adds a waiter with an event stream of its own, or returns `nil` when the work already ended.
    /// `accepts` screens responses for this waiter alone (see ``SharedWorkSink/accepts``).
    func join(priority: LoadPriority, accepts: (@Sendable (ImageLoadResponse) -> Bool)? = nil) -> SharedWorkSubscription<Value>? {
        let (stream, continuation) = AsyncThrowingStream<Event, any Error>.makeStream()
        guard let waiter = join(priority: priority, sink: .stream(continuation, accepts: accepts)) else { return nil }
        // A stream ends `.cancelled` when its reader's task is cancelled, under that task's
        // status lock; a yield to it under this work's lock waits for that same status lock (the
        // runtime takes it to enqueue the reader). Leaving from a task of its own keeps the two
        // locks from ever being taken in both orders (they were: the process hung). `.finished`
        // comes after the waiter is gone: nothing to leave.
        continuation.onTermination = { [weak self, id = waiter.id] termination in
            guard case .cancelled = termination, let self else { return }
            Task { self.leave(id) }
        }
        return SharedWorkSubscription(events: stream, waiter: waiter)
    }

    /// Starts the work as a task of its own; called once, right after the first waiter joined.
    func start(_ work: @escaping @Sendable (SharedWork<Value>) async throws -> Value) {
        let task = Task.detached(priority: priority.taskPriority) { [self] in
            do {
                finish(.success(try await work(self)))
            } catch {
                finish(.failure(error))
            }
        }
        onStop { task.cancel() }
    }

    /// Registers how to stop work that runs elsewhere and ends with ``finish(_:)``: `stop` runs
    /// once when the last waiter leaves first, at once if that already happened.
    func onStop(_ stop: @escaping @Sendable () -> Void) {
        stopper.attach(stop)
    }

    /// Sends a progress or partial event to every waiter that wants it.
    func send(_ event: Event) {
        if case .progress = event, !wantsProgress { return }
        let later = state.withLock { state in Self.deliver(event, in: &state) }
        for sink in later { sink.receive(event) }
    }

    /// Sends a response, first asking the waiters that screen responses (``SharedWorkSink/accepts``):
    /// one that refuses it leaves, its sink finished with `rejection`. Most works have none:
    /// then one locked step records and delivers it.
    func send(response: ImageLoadResponse, rejection: @autoclosure () -> WebImageError) {
        let event = Event.response(response)
        let (screens, later) = state.withLock { state -> ([(Int, @Sendable (ImageLoadResponse) -> Bool)], [Sink]) in
            let screens = state.waiters.waiters.compactMap { entry in entry.value.sink.accepts.map { (entry.key, $0) } }
            guard screens.isEmpty else { return (screens, []) }
            return ([], Self.deliver(event, in: &state))
        }
        for sink in later { sink.receive(event) }
        guard !screens.isEmpty else { return }
        for (id, accepts) in screens where !accepts(response) { leave(id, error: rejection()) }
        send(event)
    }

    /// Registers the work's reaction to priority changes (forwarding to upstream work, the
    /// download's place in the queue or the work queue).
    func onPriorityChange(_ handler: @escaping @Sendable (LoadPriority) -> Void) {
        state.withLock { $0.priorityHandler = handler }
    }

    /// Changes one waiter's priority; the work follows the highest one waiting.
    func setPriority(_ priority: LoadPriority, waiter id: Int) {
        let changed: LoadPriority? = state.withLock { state in
            guard !state.finished else { return nil }
            return state.waiters.setPriority(priority, of: id)
        }
        if let changed { notifyPriority(changed) }
    }

    /// Removes a waiter (its sink finishes with `error`); the work is stopped when no one is left.
    func leave(_ id: Int, error: any Error = WebImageError.cancelled) {
        let departure: SharedWorkWaiters<Sink, Event>.Departure? = state.withLock { state in
            guard !state.finished, let departure = state.waiters.leave(id) else { return nil }
            if case .last = departure { state.finished = true }
            return departure
        }
        switch departure {
        case nil:
            return
        case .last(let sink):
            sink.finish(.failure(error))
            stopper.cancel()
            onEnd(self)
        case .left(let sink, let lowered):
            sink.finish(.failure(error))
            if let lowered { notifyPriority(lowered) }
        }
    }

    /// Ends the work: `result` goes to every waiter. Later calls do nothing.
    func finish(_ result: Result<Value, any Error>) {
        let sinks: [Sink]? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            return state.waiters.removeAll()
        }
        guard let sinks else { return }
        onEnd(self)
        for sink in sinks { sink.finish(result) }
    }

    /// Ends the work for every waiter with `error` now, and stops it (its task is cancelled):
    /// for a limit the work overran, whose waiters should not wait for its next step.
    package func abandon(with error: any Error) {
        finish(.failure(error))
        stopper.cancel()
    }

    /// Remembers `event` for late joiners and gives it to the ordered sinks that want it; returns
    /// the other sinks that want it, to call after the lock is released. Call with the lock held.
    private static func deliver(_ event: Event, in state: inout State) -> [Sink] {
        guard !state.finished else { return [] }
        switch event {
        case .response: state.waiters.remember(event, slot: 0)
        case .progress: state.waiters.remember(event, slot: 1)
        case .partialData, .partialImage, .value: break
        }
        var later: [Sink] = []
        for waiter in state.waiters.waiters.values where waiter.sink.wants(event) {
            if waiter.sink.ordered { waiter.sink.receive(event) } else { later.append(waiter.sink) }
        }
        return later
    }

    private func notifyPriority(_ priority: LoadPriority) {
        let handler = state.withLock { $0.priorityHandler }
        handler?(priority)
    }
}

/// One caller's place in a ``SharedWork``, with its own event stream.
package struct SharedWorkSubscription<Value: Sendable>: Sendable {
    /// This waiter's events: progress, partial results, then the value or an error.
    package let events: AsyncThrowingStream<SharedWorkEvent<Value>, any Error>
    package let waiter: SharedWorkWaiter<Value>

    package var work: SharedWork<Value> { waiter.work }

    package func setPriority(_ priority: LoadPriority) { waiter.setPriority(priority) }
    /// Leaves the work now.
    package func cancel() { waiter.cancel() }

    /// Leaves the work from a task of its own: for task-cancellation handlers, which run under
    /// the task's status lock (see ``SharedWork/join(priority:accepts:)``).
    package func cancelFromCancellationHandler() {
        let waiter = waiter
        Task { waiter.cancel() }
    }

    /// Waits for the value, passing progress and partial events to `forward`.
    package func value(forwarding forward: (SharedWorkEvent<Value>) -> Void = { _ in }) async throws -> Value {
        do {
            for try await event in events {
                if case .value(let value) = event { return value }
                forward(event)
            }
        } catch is CancellationError {
            throw WebImageError.cancelled
        }
        // The stream ends without a value only when this waiter left.
        throw WebImageError.cancelled
    }
}

extension LoadPriority {
    /// The Swift task priority work at this load priority runs at.
    var taskPriority: TaskPriority {
        switch self {
        case .veryLow: .background
        case .low: .utility
        case .normal: .medium
        case .high, .veryHigh: .high
        }
    }
}
