import Synchronization

/// Hands out list indexes to the workers of a benchmark command, each index once.
final class WorkIndex: Sendable {
    private let next = Atomic<Int>(0)
    /// The next unclaimed index.
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
}
