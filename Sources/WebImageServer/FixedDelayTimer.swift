import WebImage

/// Runs each action a fixed delay after it is added, unless it is removed first: the service's
/// `--render-timeout`, for every render in flight at once.
///
/// Every action waits the same delay, so deadlines come in the order actions are added: the
/// list is first in, first out, and one task sleeps until its oldest live deadline. Adding and
/// removing take the lock and wake no thread; the task runs once per deadline reached (at most
/// one a delay while renders keep finishing in time) and ends when no action is left. A
/// `Task` with `Task.sleep` per render, as before, cost two task runs and a timer per request,
/// and its timer still fired after it was cancelled.
final class FixedDelayTimer: Sendable {
    /// An added action, to remove when it is no longer wanted.
    struct Entry: Sendable {
        fileprivate let id: Int
    }

    private struct State {
        /// Deadlines in the order added; an entry whose action is gone is skipped when reached.
        var deadlines: [(id: Int, at: ContinuousClock.Instant)] = []
        var head = 0
        var actions: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
        var sweeping = false

        /// Drops the reached or removed entries at the front; returns the actions due by `now`.
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
            // Compacted once the consumed front is most of the list: amortised O(1) a deadline.
            if head > 64 && head * 2 > deadlines.count {
                deadlines.removeFirst(head)
                head = 0
            }
            return due
        }
    }

    let delay: Duration
    private let state = Locked(State())

    init(delay: Duration) {
        self.delay = delay
    }

    /// Runs `action` after ``delay``, unless ``remove(_:)`` comes first.
    func add(_ action: @escaping @Sendable () -> Void) -> Entry {
        let deadline = ContinuousClock.now + delay
        let (id, startSweeper) = state.withLock { state -> (Int, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.actions[id] = action
            state.deadlines.append((id, deadline))
            // Removed entries behind a live head would stay until that head's deadline (a render
            // stuck for the whole delay, thousands finishing behind it): past twice the live
            // count, the list keeps only the live ones. Amortised O(1) an add; memory O(live).
            if state.deadlines.count - state.head > 2 * state.actions.count + 64 {
                state.deadlines = state.deadlines[state.head...].filter { state.actions[$0.id] != nil }
                state.head = 0
            }
            defer { state.sweeping = true }
            return (id, !state.sweeping)
        }
        if startSweeper { Task.detached { [self] in await sweep() } }
        return Entry(id: id)
    }

    /// How many deadlines the list holds, live or removed (for tests of its bound).
    var storedCount: Int { state.withLock { $0.deadlines.count - $0.head } }

    /// Forgets `entry`'s action; does nothing once it ran.
    func remove(_ entry: Entry) {
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
