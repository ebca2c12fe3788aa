import Synchronization

/// The time of the last sign of life of a transfer, for the idle timeout.
final class ActivityClock: Sendable {
    // The instant is read by the watchdog task and written by the transfer task.
    private let last = Mutex(ContinuousClock.now)

    /// Records activity now: the idle timer restarts.
    func touch() { last.withLock { $0 = .now } }

    /// When the last activity happened.
    var lastActivity: ContinuousClock.Instant { last.withLock { $0 } }
}

/// Runs work under an idle timeout that restarts on every ``ActivityClock/touch()``.
enum IdleWatchdog {
    /// Runs `work`; throws ``WebImageError/timedOut`` when `activity` stays quiet for `timeout`.
    static func run(timeout: Duration, activity: ActivityClock,
                    _ work: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await work() }
            group.addTask {
                while true {
                    let deadline = activity.lastActivity.advanced(by: timeout)
                    if ContinuousClock.now >= deadline { throw WebImageError.timedOut }
                    try await Task.sleep(until: deadline, clock: .continuous)
                }
            }
            defer { group.cancelAll() }
            // The first child to finish decides: the work's result, or the watchdog's timeout.
            try await group.next()
        }
    }
}
