import Dispatch
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
final class WorkQueue: Sendable {
    private struct State {
        var running = 0
        /// Waiting tickets in the order they run.
        var waiting = PriorityWaitList()
        var continuations: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextID = 0
    }

    /// How many pieces of work run at once.
    let width: Int
    private let state = Locked(State())

    init(width: Int) { self.width = max(1, width) }

    /// A ticket for one piece of work, so its priority can change while it waits.
    func makeTicket() -> Int { state.withLock { state in defer { state.nextID += 1 }; return state.nextID } }

    /// Runs `work` on a Dispatch thread (see ``runBlocking(qos:_:)``) once a slot is free.
    /// Throws ``WebImageError/cancelled`` when the task is cancelled while waiting.
    func perform<T: Sendable>(ticket: Int, priority: LoadPriority, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await acquire(ticket: ticket, priority: priority)
        defer { release() }
        guard !Task.isCancelled else { throw WebImageError.cancelled }
        return try await runBlocking(qos: priority.dispatchQoS, work)
    }

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
    }

    private func acquire(ticket: Int, priority: LoadPriority) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Decision { case run, wait, cancel }
                // The cancellation flag is set before `onCancel` runs, so a waiter appended here is
                // either seen by `onCancel` or never appended.
                let decision = state.withLock { state -> Decision in
                    if Task.isCancelled { return .cancel }
                    if state.running < width {
                        state.running += 1
                        return .run
                    }
                    state.waiting.append(ticket, priority: priority)
                    state.continuations[ticket] = continuation
                    return .wait
                }
                switch decision {
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

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            // Highest priority first; among equals the earliest ticket (FIFO).
            guard let ticket = state.waiting.popNext(lifo: false) else {
                state.running -= 1
                return nil
            }
            return state.continuations.removeValue(forKey: ticket)
        }
        next?.resume()
    }
}

extension LoadPriority {
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
