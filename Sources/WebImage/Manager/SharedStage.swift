#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a shared stage tells the loads waiting for it.
enum StageEvent<Value: Sendable>: Sendable {
    case progress(received: Int64, expected: Int64?)
    case partialData(Data)
    case partialImage(DecodedImage)
    case value(Value)
}

/// One unit of pipeline work (fetch the bytes of a URL, decode them, apply a transform prefix)
/// that every load asking for the same key joins instead of repeating.
///
/// The work runs once, at the highest priority of the subscribers still waiting; a late joiner
/// first gets the last progress seen, then every later event; when the last subscriber leaves
/// before the end, the work is cancelled. The lock guards the subscriber table only; no
/// continuation or handler is called while it is held (a continuation's termination handler
/// comes back into ``detach(_:)``).
final class SharedStage<Value: Sendable>: Sendable {
    private struct Subscriber {
        var priority: LoadPriority
        var continuation: AsyncThrowingStream<StageEvent<Value>, any Error>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var finished = false
        var task: Task<Void, Never>?
        var lastProgress: StageEvent<Value>?
        var priority: LoadPriority
        var priorityHandler: (@Sendable (LoadPriority) -> Void)?
    }

    let key: String
    private let state: Locked<State>
    private let onEnd: @Sendable (SharedStage<Value>) -> Void

    init(key: String, priority: LoadPriority, onEnd: @escaping @Sendable (SharedStage<Value>) -> Void) {
        self.key = key
        self.state = Locked(State(priority: priority))
        self.onEnd = onEnd
    }

    /// The priority the work should run at now.
    var priority: LoadPriority { state.withLock { $0.priority } }

    /// Adds a subscriber, or returns `nil` when the stage already ended.
    func join(priority: LoadPriority) -> StageSubscription<Value>? {
        let (stream, continuation) = AsyncThrowingStream<StageEvent<Value>, any Error>.makeStream()
        let joined: (id: Int, replay: StageEvent<Value>?, raised: LoadPriority?)? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(priority: priority, continuation: continuation)
            var raised: LoadPriority?
            if priority > state.priority, state.task != nil {
                state.priority = priority
                raised = priority
            } else if state.task == nil {
                state.priority = max(state.priority, priority)
            }
            return (id, state.lastProgress, raised)
        }
        guard let joined else { return nil }
        continuation.onTermination = { [weak self] _ in self?.detach(joined.id) }
        if let replay = joined.replay { continuation.yield(replay) }
        if let raised = joined.raised { notifyPriority(raised) }
        return StageSubscription(events: stream, stage: self, id: joined.id)
    }

    /// Starts the work; called once, right after the first subscriber joined.
    func start(_ work: @escaping @Sendable (SharedStage<Value>) async throws -> Value) {
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

    /// Sends a progress or partial event to every subscriber.
    func send(_ event: StageEvent<Value>) {
        let continuations = state.withLock { state -> [AsyncThrowingStream<StageEvent<Value>, any Error>.Continuation] in
            if case .progress = event { state.lastProgress = event }
            return state.subscribers.values.map { $0.continuation }
        }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Registers the work's reaction to priority changes (forwarding to upstream stages, the
    /// download token or the work queue).
    func onPriorityChange(_ handler: @escaping @Sendable (LoadPriority) -> Void) {
        state.withLock { $0.priorityHandler = handler }
    }

    /// Changes one subscriber's priority; the stage follows the highest one waiting.
    func setPriority(_ priority: LoadPriority, subscriber id: Int) {
        let changed: LoadPriority? = state.withLock { state in
            guard !state.finished, state.subscribers[id] != nil else { return nil }
            state.subscribers[id]?.priority = priority
            let highest = state.subscribers.values.map { $0.priority }.max() ?? priority
            guard highest != state.priority else { return nil }
            state.priority = highest
            return highest
        }
        if let changed { notifyPriority(changed) }
    }

    /// Removes a subscriber (its stream ends with ``WebImageError/cancelled``); the work is
    /// cancelled when no one is left.
    func detach(_ id: Int) {
        var lowered: LoadPriority?
        let outcome: (continuation: AsyncThrowingStream<StageEvent<Value>, any Error>.Continuation, task: Task<Void, Never>?, ended: Bool)? = state.withLock { state in
            guard !state.finished, let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            if state.subscribers.isEmpty {
                state.finished = true
                return (subscriber.continuation, state.task, true)
            }
            let highest = state.subscribers.values.map { $0.priority }.max() ?? state.priority
            if highest != state.priority {
                state.priority = highest
                lowered = highest
            }
            return (subscriber.continuation, nil, false)
        }
        guard let outcome else { return }
        outcome.continuation.finish(throwing: WebImageError.cancelled)
        if outcome.ended {
            outcome.task?.cancel()
            onEnd(self)
        } else if let lowered {
            notifyPriority(lowered)
        }
    }

    private func finish(_ result: Result<Value, any Error>) {
        let continuations = state.withLock { state -> [AsyncThrowingStream<StageEvent<Value>, any Error>.Continuation] in
            guard !state.finished else { return [] }
            state.finished = true
            defer { state.subscribers.removeAll() }
            return state.subscribers.values.map { $0.continuation }
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

/// One load's place in a ``SharedStage``.
struct StageSubscription<Value: Sendable>: Sendable {
    /// This subscriber's events: progress, partial results, then the value or an error.
    let events: AsyncThrowingStream<StageEvent<Value>, any Error>
    let stage: SharedStage<Value>
    let id: Int

    func setPriority(_ priority: LoadPriority) { stage.setPriority(priority, subscriber: id) }
    func cancel() { stage.detach(id) }

    /// Waits for the value, passing progress and partial events to `forward`.
    func value(forwarding forward: (StageEvent<Value>) -> Void = { _ in }) async throws -> Value {
        do {
            for try await event in events {
                if case .value(let value) = event { return value }
                forward(event)
            }
        } catch is CancellationError {
            throw WebImageError.cancelled
        }
        // The stream ends without a value only when this subscriber was detached.
        throw WebImageError.cancelled
    }
}

/// The table of running stages by key; the lock guards only the table.
final class StagePool: Sendable {
    private let stages = Locked<[String: any Sendable]>([:])

    /// Joins the running stage for `key`, or starts `work` as a new one.
    func subscribe<Value: Sendable>(key: String, priority: LoadPriority,
                                    work: @escaping @Sendable (SharedStage<Value>) async throws -> Value) -> StageSubscription<Value> {
        while true {
            let (stage, isNew) = stages.withLock { table -> (SharedStage<Value>, Bool) in
                if let running = table[key] as? SharedStage<Value> { return (running, false) }
                let stage = SharedStage<Value>(key: key, priority: priority) { [weak self] ended in
                    self?.remove(ended)
                }
                table[key] = stage
                return (stage, true)
            }
            // A stage found in the table may end between the lookup and the join: look again.
            guard let subscription = stage.join(priority: priority) else {
                remove(stage)
                continue
            }
            if isNew { stage.start(work) }
            return subscription
        }
    }

    /// How many stages are running.
    var count: Int { stages.withLock { $0.count } }

    private func remove<Value>(_ stage: SharedStage<Value>) {
        stages.withLock { table in
            if let current = table[stage.key] as? SharedStage<Value>, current === stage { table[stage.key] = nil }
        }
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
