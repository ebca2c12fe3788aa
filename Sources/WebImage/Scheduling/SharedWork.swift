#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a piece of shared work tells the callers waiting for it.
enum SharedWorkEvent<Value: Sendable>: Sendable {
    case progress(received: Int64, expected: Int64?)
    case partialData(Data)
    case partialImage(DecodedImage)
    case value(Value)
}

/// One piece of work (fetch the bytes of a URL, decode them, apply a transform prefix, read a
/// cache entry) that every caller asking for the same key joins instead of repeating.
///
/// The rules are ``SharedWorkWaiters``'s: the work runs once, at the highest priority of the
/// waiters still there; a late joiner first gets the last progress seen, then every later
/// event; when the last waiter leaves before the end, the work is cancelled; the result goes to
/// every waiter. This type adds the lock, the task and each waiter's event stream. The lock
/// guards the waiter table only; no continuation or handler is called while it is held (a
/// continuation's termination handler comes back into ``detach(_:)``).
final class SharedWork<Value: Sendable>: Sendable {
    typealias Continuation = AsyncThrowingStream<SharedWorkEvent<Value>, any Error>.Continuation

    private struct State {
        var waiters: SharedWorkWaiters<Continuation, SharedWorkEvent<Value>>
        var nextID = 0
        var finished = false
        var task: Task<Void, Never>?
        var priorityHandler: (@Sendable (LoadPriority) -> Void)?
    }

    private let state: Locked<State>
    private let onEnd: @Sendable (SharedWork<Value>) -> Void

    init(priority: LoadPriority, onEnd: @escaping @Sendable (SharedWork<Value>) -> Void = { _ in }) {
        self.state = Locked(State(waiters: SharedWorkWaiters(priority: priority)))
        self.onEnd = onEnd
    }

    /// The priority the work should run at now.
    var priority: LoadPriority { state.withLock { $0.waiters.priority } }

    /// How many callers wait.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Adds a waiter, or returns `nil` when the work already ended.
    func join(priority: LoadPriority) -> SharedWorkSubscription<Value>? {
        let (stream, continuation) = AsyncThrowingStream<SharedWorkEvent<Value>, any Error>.makeStream()
        let joined: (id: Int, replay: [SharedWorkEvent<Value>], raised: LoadPriority?)? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            let (replay, raised) = state.waiters.join(id, priority: priority, sink: continuation)
            // Before the work registers its handler, a raise reaches no one: it starts at the new priority.
            return (id, replay, raised)
        }
        guard let joined else { return nil }
        continuation.onTermination = { [weak self] _ in self?.detach(joined.id) }
        for event in joined.replay { continuation.yield(event) }
        if let raised = joined.raised { notifyPriority(raised) }
        return SharedWorkSubscription(events: stream, work: self, id: joined.id)
    }

    /// Starts the work; called once, right after the first waiter joined.
    func start(_ work: @escaping @Sendable (SharedWork<Value>) async throws -> Value) {
        let priority = self.priority
        let task = Task.detached(priority: priority.taskPriority) { [self] in
            do {
                finish(.success(try await work(self)))
            } catch {
                finish(.failure(error))
            }
        }
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.finished
        }
        if cancelNow { task.cancel() }
    }

    /// Sends a progress or partial event to every waiter.
    func send(_ event: SharedWorkEvent<Value>) {
        let continuations = state.withLock { state -> [Continuation] in
            if case .progress = event { state.waiters.remember(event) }
            return state.waiters.waiters.values.map(\.sink)
        }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Registers the work's reaction to priority changes (forwarding to upstream work, the
    /// download token or the work queue).
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

    /// Removes a waiter (its stream ends with ``WebImageError/cancelled``); the work is
    /// cancelled when no one is left.
    func detach(_ id: Int) {
        let outcome: (departure: SharedWorkWaiters<Continuation, SharedWorkEvent<Value>>.Departure, task: Task<Void, Never>?)? = state.withLock { state in
            guard !state.finished, let departure = state.waiters.leave(id) else { return nil }
            if case .last = departure { state.finished = true }
            return (departure, state.task)
        }
        guard let outcome else { return }
        switch outcome.departure {
        case .last(let continuation):
            continuation.finish(throwing: WebImageError.cancelled)
            outcome.task?.cancel()
            onEnd(self)
        case .left(let continuation, let lowered):
            continuation.finish(throwing: WebImageError.cancelled)
            if let lowered { notifyPriority(lowered) }
        }
    }

    private func finish(_ result: Result<Value, any Error>) {
        let continuations = state.withLock { state -> [Continuation] in
            guard !state.finished else { return [] }
            state.finished = true
            return state.waiters.removeAll()
        }
        onEnd(self)
        for continuation in continuations {
            switch result {
            case .success(let value):
                continuation.yield(.value(value))
                continuation.finish()
            case .failure(let error):
                continuation.finish(throwing: error)
            }
        }
    }

    private func notifyPriority(_ priority: LoadPriority) {
        let handler = state.withLock { $0.priorityHandler }
        handler?(priority)
    }
}

/// One caller's place in a ``SharedWork``.
struct SharedWorkSubscription<Value: Sendable>: Sendable {
    /// This waiter's events: progress, partial results, then the value or an error.
    let events: AsyncThrowingStream<SharedWorkEvent<Value>, any Error>
    let work: SharedWork<Value>
    let id: Int

    func setPriority(_ priority: LoadPriority) { work.setPriority(priority, waiter: id) }
    func cancel() { work.detach(id) }

    /// Waits for the value, passing progress and partial events to `forward`.
    func value(forwarding forward: (SharedWorkEvent<Value>) -> Void = { _ in }) async throws -> Value {
        do {
            for try await event in events {
                if case .value(let value) = event { return value }
                forward(event)
            }
        } catch is CancellationError {
            throw WebImageError.cancelled
        }
        // The stream ends without a value only when this waiter was detached.
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
