import Synchronization

/// Where a download's network task is kept, so it can be cancelled.
///
/// The coordinator marks a download running under its lock but starts the task after releasing
/// it, so a cancel can come before the task exists: the slot remembers it and cancels the task
/// the moment it starts.
final class DownloadTaskSlot: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var cancelled = false
    }

    // Guards the task and the cancelled flag; touched only by the starter and a canceller.
    private let state = Mutex(State())

    /// Starts `operation` as the download's task (cancelled at once if ``cancel()`` came first).
    func start(_ operation: sending @escaping @isolated(any) () async -> Void) {
        let task = Task(operation: operation)
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the task, now or when it starts.
    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
