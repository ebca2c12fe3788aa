#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
/// The bytes the renders of the manager's encode stage may hold together
/// (``ImageManagerConfiguration/EncodeStageLimits/memoryBudget``; the service's memory budget less its memory cache).
///
/// A render takes its estimate (``ImageManager/PreparedRender/bytes``) before it decodes anything and gives it back when its
/// output is encoded. One that does not fit in what is left waits, first come first served (a
/// large render is never passed over by a stream of small ones); how many may wait is bounded by
/// the stage's admission (``ImageManagerConfiguration/EncodeStageLimits/maxAdmitted``). Waiters are render stages, which are
/// never cancelled while someone waits for them (a client that leaves does not cancel a render others may join), so a wait
/// has no cancellation path.
package final class MemoryBudget: Sendable {
    /// The most bytes the renders may hold together.
    package let capacity: Int

    private struct Waiter {
        var bytes: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
    }

    // The count and the queue change together, under this lock.
    private let state: Locked<State>

    package init(capacity: Int) {
        self.capacity = capacity
        state = Locked(State(available: capacity))
    }

    /// The bytes taken now.
    package var inUse: Int { capacity - state.withLock { $0.available } }
    /// How many renders wait for room.
    package var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits until `bytes` fit, then takes them; give them back with ``release(_:)``.
    /// - Throws: ``WebImageError/tooLarge(_:)`` (413) when `bytes` is more than the whole budget:
    ///   such a render could never run within it.
    package func acquire(_ bytes: Int) async throws {
        guard bytes <= capacity else {
            throw WebImageError.tooLarge("rendering this source takes about \(Self.mebibytes(bytes)) MiB; "
                + "the memory budget leaves \(Self.mebibytes(capacity)) MiB for renders")
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                guard state.waiters.isEmpty, bytes <= state.available else {
                    state.waiters.append(Waiter(bytes: bytes, continuation: continuation))
                    return false
                }
                state.available -= bytes
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Gives back bytes ``acquire(_:)`` took, and admits the waiters that now fit, in order.
    package func release(_ bytes: Int) {
        let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.available += bytes
            var admitted: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiters.first, first.bytes <= state.available {
                state.available -= first.bytes
                admitted.append(state.waiters.removeFirst().continuation)
            }
            return admitted
        }
        for continuation in admitted { continuation.resume() }
    }

    private static func mebibytes(_ bytes: Int) -> Int { bytes / (1 << 20) + (bytes % (1 << 20) == 0 ? 0 : 1) }
}
