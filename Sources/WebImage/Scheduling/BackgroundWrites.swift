/// Writes that run after their caller has its answer (cache stores, a result store's uploads),
/// tracked so a process can wait for them before it exits: the manager's disk stores and the
/// service's disk and result-store writes all go through one of these.
package final class BackgroundWrites: Sendable {
    private let tasks = Locked<(next: Int, running: [Int: Task<Void, Never>])>((0, [:]))

    package init() {}

    /// Starts `work` detached at `priority` (default `.utility`: it competes with no one's answer).
    package func run(priority: TaskPriority = .utility, _ work: @escaping @Sendable () async -> Void) {
        tasks.withLock { state in
            let id = state.next
            state.next += 1
            state.running[id] = Task.detached(priority: priority) { [tasks] in
                await work()
                _ = tasks.withLock { $0.running.removeValue(forKey: id) }
            }
        }
    }

    /// Returns when every write started so far, and every write those started, has ended.
    package func waitForAll() async {
        while true {
            let running = tasks.withLock { Array($0.running.values) }
            if running.isEmpty { return }
            for task in running { await task.value }
        }
    }
}
