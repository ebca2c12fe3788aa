/// Runs each action a fixed delay after it is added, unless it is removed first: the encode
/// stage's deadline (``ImageManagerConfiguration/EncodeStageLimits/deadline``, the service's `--render-timeout`), for every render in flight at once.
///
/// Every action waits the same delay, so deadlines come in the order actions are added: the
/// list is first in, first out, and one task sleeps until its oldest live deadline. Adding and
/// removing take the lock and wake no thread; the task runs once per deadline reached (at most
/// one a delay while renders keep finishing in time) and ends when no action is left. A
/// `Task` with `Task.sleep` per render, as before, cost two task runs and a timer per request,
/// and its timer still fired after it was cancelled.
package final class FixedDelayTimer: Sendable {
    /// An added action, to remove when it is no longer wanted.
    package struct Entry: Sendable {
        fileprivate let id: Int
    }

    private struct State {
        /// Deadlines in the order added; an entry whose action is gone is skipped when reached.
        var deadlines: [(id: Int, at: ContinuousClock.Instant)] = []
        var head = 0
        var actions: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
        var sweeping = false

        /// Steps past the reached or removed entries at the front; returns the actions due by `now`.
        mutating func takeDue(by now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
            var due: [@Sendable () -> Void] = []
            while head < deadlines.count {
                let (id, at) = deadlines[head]
                if let action = actions[id] {
                    guard at <= now else { break }
                    actions[id] = nil
                    due.append(action)
                }
                head += 1
            }
            return due
        }

        /// Keeps only the live entries once the list holds more than twice as many: the front
        /// already reached, and the removed entries behind a live head (a render stuck for the
        /// whole delay, thousands finishing behind it). Amortised O(1) an add; memory O(live).
        mutating func compact() {
            guard deadlines.count > 2 * actions.count + 64 else { return }
            deadlines = deadlines[head...].filter { actions[$0.id] != nil }
            head = 0
        }
    }

    package let delay: Duration
    private let state = Locked(State())

    package init(delay: Duration) {
        self.delay = delay
    }

    /// Runs `action` after ``delay``, unless ``remove(_:)`` comes first.
    package func add(_ action: @escaping @Sendable () -> Void) -> Entry {
        let deadline = ContinuousClock.now + delay
        let (id, startSweeper) = state.withLock { state -> (Int, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.actions[id] = action
            state.deadlines.append((id, deadline))
            state.compact()
            defer { state.sweeping = true }
            return (id, !state.sweeping)
        }
        if startSweeper { Task.detached { [self] in await sweep() } }
        return Entry(id: id)
    }

    /// How many deadlines the list holds, live, removed or reached (for tests of its bound).
    package var storedCount: Int { state.withLock { $0.deadlines.count } }

    /// Forgets `entry`'s action; does nothing once it ran.
    package func remove(_ entry: Entry) {
        state.withLock { _ = $0.actions.removeValue(forKey: entry.id) }
    }

    /// Sleeps until the oldest live deadline, runs what is due, and ends when nothing is left.
    private func sweep() async {
        while true {
            let now = ContinuousClock.now
            let (due, next) = state.withLock { state -> ([@Sendable () -> Void], ContinuousClock.Instant?) in
                let due = state.takeDue(by: now)
                guard state.head < state.deadlines.count else {
                    state.deadlines.removeAll()
                    state.head = 0
                    state.sweeping = false
                    return (due, nil)
                }
                return (due, state.deadlines[state.head].at)
            }
            for action in due { action() }
            guard let next else { return }
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }
}
