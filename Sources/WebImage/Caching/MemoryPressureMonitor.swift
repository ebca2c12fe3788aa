/// Watches a control group's memory and calls a handler when the group nears its limit: the
/// Linux stand-in for the memory warning on which SDWebImage purges its memory cache.
///
/// The signal is the group's working set (usage minus inactive page cache, see
/// ``CgroupMemory/Reading/workingSet``) at or above ``threshold`` of the limit, polled. Not the
/// `max`/`high` counters of `memory.events` nor PSI's `memory.pressure`: both also count the
/// reclaim of clean page cache, which a process streaming files (a disk cache) pushes to the limit
/// with no risk of being OOM-killed, so it would purge all the time. The working set is what the
/// kernel cannot take back cheaply, and what container runtimes compare with the limit.
package final class MemoryPressureMonitor: Sendable {
    /// The group watched.
    package let memory: CgroupMemory
    /// The share of the limit (0...1) the working set must reach to count as pressure.
    package let threshold: Double
    private let handler: @Sendable (CgroupMemory.Reading) -> Void
    /// The polling task, while ``start(interval:)`` runs.
    private let polling = Locked<Task<Void, Never>?>(nil)

    /// Creates a monitor; nothing is read until ``check()`` or ``start(interval:)``.
    /// - Parameters:
    ///   - memory: the group (tests pass a fake cgroup tree).
    ///   - threshold: the share of the limit that counts as pressure.
    ///   - handler: called with the reading on every check that finds pressure.
    package init(memory: CgroupMemory = .current, threshold: Double = 0.9,
                handler: @escaping @Sendable (CgroupMemory.Reading) -> Void) {
        self.memory = memory
        self.threshold = min(1, max(0, threshold))
        self.handler = handler
    }

    deinit { stop() }

    /// Reads the group once and calls the handler when its working set is at or above the
    /// threshold. Returns whether it did; `false` also when the group has no limit.
    @discardableResult
    package func check() -> Bool {
        guard let reading = memory.reading(),
              Double(reading.workingSet) >= Double(reading.limit) * threshold else { return false }
        handler(reading)
        return true
    }

    /// Checks every `interval` until ``stop()`` (or until the monitor is released). Reading the
    /// cgroup files costs microseconds and touches no disk, so the loop runs as a plain task.
    package func start(interval: Duration = .seconds(2)) {
        let task = Task.detached(priority: .utility) { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                self.check()
            }
        }
        polling.withLock { $0?.cancel(); $0 = task }
    }

    /// Stops the polling ``start(interval:)`` began.
    package func stop() {
        polling.withLock { $0?.cancel(); $0 = nil }
    }
}
