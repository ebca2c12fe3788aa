
/// Where a running download keeps the way to stop it: its task (file and data URLs) or its
/// HTTP transfer's cancel.
///
/// The downloader marks a download running under its lock but starts the work after releasing
/// it, so a cancel can come before the work exists: the slot remembers it and stops the work
/// the moment it is attached. ``SharedWork`` keeps how to stop its work in one too: a last
/// waiter can leave before the work is started.
final class DownloadTaskSlot: Sendable {
    private struct State {
        var stop: (@Sendable () -> Void)?
        var cancelled = false
    }

    // Guards the stop action and the cancelled flag; touched only by the starter and a canceller.
    private let state = Locked(State())

    /// Starts `operation` as the download's task (cancelled at once if ``cancel()`` came first).
    func start(_ operation: sending @escaping @isolated(any) () async -> Void) {
        let task = Task(operation: operation)
        attach { task.cancel() }
    }

    /// Records how to stop work started elsewhere; runs `stop` at once if ``cancel()`` came first.
    func attach(_ stop: @escaping @Sendable () -> Void) {
        let cancelled = state.withLock { state -> Bool in
            state.stop = stop
            return state.cancelled
        }
        if cancelled { stop() }
    }

    /// Stops the work, now or when it is attached.
    func cancel() {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            return state.stop
        }
        stop?()
    }
}
