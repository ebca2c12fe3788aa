/// Writes that run after their caller has its answer (cache stores, a result store's uploads),
/// counted so a process can wait for them before it exits: the manager's disk stores and the
/// service's disk and result-store writes all go through one of these.
package final class BackgroundWrites: Sendable {
    private struct State {
        var running = 0
        /// Callers of ``waitForAll()``, resumed when `running` comes back to zero.
        var idle: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    package init() {}

    /// Starts `work` detached at `priority` (default `.utility`: it competes with no one's answer).
    package func run(priority: TaskPriority = .utility, _ work: @escaping @Sendable () async -> Void) {
        begin()
        Task.detached(priority: priority) { [self] in
            await work()
            end()
        }
    }

    /// Runs blocking `work` (a file write) in a slot of the blocking-I/O budget at low priority,
    /// with no task around it: one thread wake-up a write, where ``run(priority:_:)`` around an
    /// `async` store costs three (the task, the I/O thread, the task again). Under load, the
    /// thread that ends one write takes the next (``WorkQueue/submit(priority:_:)``).
    package func runBlocking(_ work: @escaping @Sendable () -> Void) {
        begin()
        WorkQueue.blockingIO.submit(priority: .low) { [self] in
            work()
            end()
        }
    }

    /// Returns when every write started so far, and every write those started, has ended.
    package func waitForAll() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                guard state.running > 0 else { return true }
                state.idle.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func begin() {
        state.withLock { $0.running += 1 }
    }

    private func end() {
        let idle = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.idle = [] }
            return state.idle
        }
        for continuation in idle { continuation.resume() }
    }
}
