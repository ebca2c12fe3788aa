import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs CPU-heavy work (decoding, transforming) at most ``width`` at a time, highest priority
/// first, then first come first served, on Dispatch threads rather than the cooperative pool.
///
/// Bounding the width keeps a burst of a thousand decodes from occupying every thread at once
/// (the network's event loops and the callers keep theirs), and the ordering lets a visible
/// image's decode overtake a prefetch's. The lock guards only the waiting list and the count.
///
/// ``cpu`` is the process's one CPU budget: every decode (from the network or from disk),
/// transform and encode takes one of its slots, so the process never runs more CPU work than
/// cores, whichever manager or cache asks. A queue made `within` it (a manager's own limit)
/// takes its own slot first, then one of the budget's.
package final class WorkQueue: Sendable {
    /// The process's CPU budget: one slot per active core.
    package static let cpu = WorkQueue(width: ProcessInfo.processInfo.activeProcessorCount)

    /// The process's budget for blocking disk I/O (cache reads): wider than ``cpu``, since a
    /// blocked read uses no core, but bounded, so a burst of misses cannot take every thread.
    static let blockingIO = WorkQueue(width: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    /// Ticket numbers, process-wide, so a ticket orders and re-prioritises the same work in a
    /// queue and in the budget it runs within.
    private static let tickets = Atomic<Int>(0)

    private struct State {
        var running = 0
        /// Waiting tickets in the order they run.
        var waiting = PriorityWaitList()
        var continuations: [Int: CheckedContinuation<Void, any Error>] = [:]
        var uncancellable: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiting work of ``perform(ticket:priority:_:)`` on a queue without a parent: the
        /// thread that frees a slot runs it (see ``runInSlot(ticket:priority:_:)``).
        var jobs: [Int: Job] = [:]
    }

    /// A piece of work that waits for a slot with its caller's continuation: `run` does it and
    /// answers the caller, `cancel` answers that it was cancelled.
    private struct Job: Sendable {
        let qos: DispatchQoS.QoSClass
        let run: @Sendable () -> Void
        let cancel: @Sendable () -> Void
    }

    /// What a caller asking for a slot does (``takeSlot(ticket:priority:cancellable:waiting:)``).
    private enum SlotDecision { case run, wait, cancel }

    /// Who takes a freed slot.
    private enum Waiter {
        case job(Job)
        case caller(CheckedContinuation<Void, any Error>)
        case uncancellableCaller(CheckedContinuation<Void, Never>)
    }

    /// How many pieces of work run at once.
    let width: Int
    /// The budget this queue's work also takes a slot of, if any.
    let parent: WorkQueue?
    private let state = Locked(State())

    init(width: Int, within parent: WorkQueue? = nil) {
        self.width = max(1, width)
        self.parent = parent
    }

    /// A ticket for one piece of work, so its priority can change while it waits.
    package func makeTicket() -> Int { Self.tickets.add(1, ordering: .relaxed).oldValue }

    /// Runs `work` on a Dispatch thread once a slot is free (see ``runInSlot(ticket:priority:_:)``).
    /// Throws ``WebImageError/cancelled`` when the task is cancelled while waiting.
    package func perform<T: Sendable>(ticket: Int, priority: LoadPriority, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard let parent else { return try await runInSlot(ticket: ticket, priority: priority, work) }
        try await acquire(ticket: ticket, priority: priority)
        defer { release() }
        guard !Task.isCancelled else { throw WebImageError.cancelled }
        // Slots are taken outside in (this queue's, then the budget's) and never the other way: no deadlock.
        return try await parent.perform(ticket: ticket, priority: priority, work)
    }

    /// Runs `work` in a slot, on a Dispatch thread: at once when a slot is free, else queued with
    /// its caller's continuation, and the thread whose work ends next runs it (at the same QoS;
    /// else it starts it on a thread of its own). Under load a piece of work so costs one wake-up,
    /// its caller's; taking the slot on the caller's thread and then dispatching cost three (the
    /// caller woken for the slot, a Dispatch thread, the caller again): the service's 1 MP renders
    /// made 18 context switches per request.
    private func runInSlot<T: Sendable>(ticket: Int, priority: LoadPriority, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let cancelled = DecodeCancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = Job(qos: priority.dispatchQoS, run: {
                    // Cancelled after it left the waiting list, before its thread took it: it does not run.
                    if cancelled.isCancelled {
                        continuation.resume(throwing: WebImageError.cancelled)
                    } else {
                        continuation.resume(with: Result { try work() })
                    }
                }, cancel: {
                    continuation.resume(throwing: WebImageError.cancelled)
                })
                switch takeSlot(ticket: ticket, priority: priority, waiting: { $0.jobs[ticket] = job }) {
                case .run: start(job)
                case .cancel: job.cancel()
                case .wait: break
                }
            }
        } onCancel: {
            cancelled.cancel()
            let waiting = state.withLock { state -> Job? in
                guard state.waiting.remove(ticket) else { return nil }
                return state.jobs.removeValue(forKey: ticket)
            }
            waiting?.cancel()
        }
    }

    /// Runs `work` in a slot, on a Dispatch thread, and returns at once: for work no caller waits
    /// for (``BackgroundWrites/runBlocking(_:)``). It waits for its slot like any other, and is
    /// never cancelled.
    func submit(priority: LoadPriority, _ work: @escaping @Sendable () -> Void) {
        guard parent == nil else {
            // Not used with a parent today; correct, at the cost of a task.
            Task.detached { await self.performIgnoringCancellation(priority: priority, work) }
            return
        }
        let ticket = makeTicket()
        let job = Job(qos: priority.dispatchQoS, run: work, cancel: {})
        if takeSlot(ticket: ticket, priority: priority, cancellable: false, waiting: { $0.jobs[ticket] = job }) == .run {
            start(job)
        }
    }

    /// Runs `job` on a Dispatch thread in the slot it holds, then every waiting job this thread
    /// can take, and gives the slot back when none is left.
    private func start(_ job: Job) {
        DispatchQueue.global(qos: job.qos).async { [self] in
            var next: Job? = job
            while let current = next {
                current.run()
                next = handOff(keepingJobsAt: current.qos)
            }
        }
    }

    /// Runs `work` on a Dispatch thread once a slot is free, waiting for the slot even when the
    /// task is cancelled: for work whose caller must get its answer (a disk cache's reads and
    /// writes, which report no cancellation).
    func performIgnoringCancellation<T: Sendable>(priority: LoadPriority, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let ticket = makeTicket()
        await acquireIgnoringCancellation(ticket: ticket, priority: priority)
        defer { release() }
        if let parent { return try await parent.performIgnoringCancellation(priority: priority, work) }
        return try await runBlocking(qos: priority.dispatchQoS, work)
    }

    /// The non-throwing form of ``performIgnoringCancellation(priority:_:)``.
    func performIgnoringCancellation<T: Sendable>(priority: LoadPriority, _ work: @escaping @Sendable () -> T) async -> T {
        let ticket = makeTicket()
        await acquireIgnoringCancellation(ticket: ticket, priority: priority)
        defer { release() }
        if let parent { return await parent.performIgnoringCancellation(priority: priority, work) }
        return await runBlocking(qos: priority.dispatchQoS, work)
    }

    /// How many pieces of work hold a slot now.
    var runningCount: Int { state.withLock { $0.running } }

    /// How many pieces of work wait for a slot now.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs asynchronous `work` once a slot is free (for limits on whole loads, not CPU work).
    func performAsync<T: Sendable>(ticket: Int, priority: LoadPriority, _ work: @Sendable () async throws -> T) async throws -> T {
        try await acquire(ticket: ticket, priority: priority)
        defer { release() }
        guard !Task.isCancelled else { throw WebImageError.cancelled }
        return try await work()
    }

    /// Raises or lowers a waiting ticket's priority (no effect once it runs).
    func setPriority(_ priority: LoadPriority, ticket: Int) {
        state.withLock { $0.waiting.setPriority(priority, of: ticket) }
        parent?.setPriority(priority, ticket: ticket)
    }

    private func acquire(ticket: Int, priority: LoadPriority) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                switch takeSlot(ticket: ticket, priority: priority, waiting: { $0.continuations[ticket] = continuation }) {
                case .run: continuation.resume()
                case .cancel: continuation.resume(throwing: WebImageError.cancelled)
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard state.waiting.remove(ticket) else { return nil }
                return state.continuations.removeValue(forKey: ticket)
            }
            waiter?.resume(throwing: WebImageError.cancelled)
        }
    }

    private func acquireIgnoringCancellation(ticket: Int, priority: LoadPriority) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let decision = takeSlot(ticket: ticket, priority: priority, cancellable: false,
                                    waiting: { $0.uncancellable[ticket] = continuation })
            if decision == .run { continuation.resume() }
        }
    }

    /// Takes a free slot (`run`), or puts `ticket` on the waiting list, `waiting` recording who
    /// waits (`wait`); `cancel` when the calling task is cancelled and the wait is `cancellable`.
    /// The task's cancellation flag is set before its `onCancel` runs, so a waiter listed here is
    /// either seen by `onCancel` or never listed.
    private func takeSlot(ticket: Int, priority: LoadPriority, cancellable: Bool = true,
                          waiting: (inout State) -> Void) -> SlotDecision {
        state.withLock { state -> SlotDecision in
            if cancellable, Task.isCancelled { return .cancel }
            if state.running < width {
                state.running += 1
                return .run
            }
            state.waiting.append(ticket, priority: priority)
            waiting(&state)
            return .wait
        }
    }

    /// Gives a slot back from a caller's thread: to the next waiter, else to the queue.
    private func release() {
        _ = handOff(keepingJobsAt: nil)
    }

    /// Gives the slot of work that ended to the next waiter. A job at `qos` is returned for the
    /// calling Dispatch thread to run; any other job starts on a thread of its own, and a waiting
    /// caller is resumed.
    private func handOff(keepingJobsAt qos: DispatchQoS.QoSClass?) -> Job? {
        switch nextWaiter() {
        case .job(let job) where job.qos == qos: return job
        case .job(let job): start(job)
        case .caller(let continuation): continuation.resume()
        case .uncancellableCaller(let continuation): continuation.resume()
        case nil: break
        }
        return nil
    }

    /// The waiter a freed slot goes to, taken off the list; with none, the slot is free again.
    private func nextWaiter() -> Waiter? {
        state.withLock { state -> Waiter? in
            // Highest priority first; among equals the earliest ticket (FIFO).
            guard let ticket = state.waiting.popNext(lifo: false) else {
                state.running -= 1
                return nil
            }
            if let job = state.jobs.removeValue(forKey: ticket) { return .job(job) }
            if let continuation = state.continuations.removeValue(forKey: ticket) { return .caller(continuation) }
            if let continuation = state.uncancellable.removeValue(forKey: ticket) { return .uncancellableCaller(continuation) }
            // Unreachable: every waiting ticket has one of the three.
            state.running -= 1
            return nil
        }
    }
}

extension LoadPriority {
    /// The load priority of work started from a task at `priority` (the inverse of ``taskPriority``).
    init(_ priority: TaskPriority) {
        if priority >= .high {
            self = .high
        } else if priority >= .medium {
            self = .normal
        } else if priority >= .low {
            self = .low
        } else {
            self = .veryLow
        }
    }

    /// The Dispatch quality of service work at this priority runs at.
    var dispatchQoS: DispatchQoS.QoSClass {
        switch self {
        case .veryLow: .background
        case .low: .utility
        case .normal: .userInitiated
        case .high, .veryHigh: .userInteractive
        }
    }
}
