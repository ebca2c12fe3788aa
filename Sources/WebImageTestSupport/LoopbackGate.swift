import WebImage

/// A latch that holds a ``LoopbackServer`` response until the test opens it.
///
/// Ordering tests use gates instead of sleeps: the server parks the response at the gate and the
/// test decides when it continues. Opening is permanent; waiters that arrive later pass at once.
public final class LoopbackGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }

    // Every field of the gate lives behind this lock.
    private let state = Locked(State())

    /// Creates a closed gate.
    public init() {}

    /// Whether ``open()`` was called.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Lets every held and future response through.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the gate opens or the calling task is cancelled (the server cancels a
    /// connection's task when the client goes away or the server shuts down).
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let passNow = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if passNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
