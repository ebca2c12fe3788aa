#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageManagerConfiguration/EncodeStageLimits`` at work: the admission count, the memory budget and the deadline timer
/// one manager's encode stage shares among its renders.
final class EncodeStageBounds: Sendable {
    let limits: ImageManagerConfiguration.EncodeStageLimits
    let memory: MemoryBudget?
    let deadlines: FixedDelayTimer?
    private let admitted = Locked(0)

    init(_ limits: ImageManagerConfiguration.EncodeStageLimits) {
        self.limits = limits
        memory = limits.memoryBudget.map { MemoryBudget(capacity: max(0, $0)) }
        deadlines = limits.deadline.map { FixedDelayTimer(delay: $0) }
    }

    /// Takes an admission slot if one is free; the caller gives it back with ``release()``.
    func admit() -> Bool {
        guard let limit = limits.maxAdmitted else { return true }
        return admitted.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives back a slot ``admit()`` took.
    func release() {
        guard limits.maxAdmitted != nil else { return }
        admitted.withLock { $0 -= 1 }
    }

    /// How many slots are taken.
    var admittedCount: Int { admitted.withLock { $0 } }

    /// Runs `body` holding `bytes` of the memory budget, if there is one.
    func withMemory<T>(_ bytes: Int, _ body: () async throws -> T) async throws -> T {
        guard let memory else { return try await body() }
        try await memory.acquire(bytes)
        defer { memory.release(bytes) }
        return try await body()
    }

    /// Runs `body` under the deadline, if there is one: past it, `work`'s waiters get
    /// ``WebImageError/deadlineExceeded(_:)`` and its task is cancelled; an output that ends
    /// after it is thrown away.
    func withDeadline<Shared, T>(of work: SharedWork<Shared>, _ body: () async throws -> T) async throws -> T {
        guard let deadlines else { return try await body() }
        let entry = deadlines.add { [limits] in
            // Counted before the waiters hear of it, so a reader of the metric next sees it.
            limits.onDeadline?()
            work.abandon(with: WebImageError.deadlineExceeded(deadlines.delay))
        }
        defer { deadlines.remove(entry) }
        let value = try await body()
        try Task.checkCancellation()
        return value
    }
}
