#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Runs `body` in a task of its own and waits for it at most `limit`: `nil` when it has not
/// finished by then (the task is cancelled and left behind). A guard, not synchronisation: it
/// turns a completion that never comes into a failed expectation instead of a hung run.
public func finishing<T: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
    let resumed = Locked(false)
    let work = Locked<Task<Void, Never>?>(nil)
    let guardTask = Locked<Task<Void, Never>?>(nil)
    let result: T? = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let resumeOnce: @Sendable (T?) -> Void = { value in
            let first = resumed.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: value) }
        }
        work.withLock { $0 = Task { resumeOnce(await body()) } }
        guardTask.withLock {
            $0 = Task {
                try? await Task.sleep(for: limit)
                resumeOnce(nil)
            }
        }
    }
    guardTask.withLock { $0 }?.cancel()
    if result == nil { work.withLock { $0 }?.cancel() }
    return result
}
