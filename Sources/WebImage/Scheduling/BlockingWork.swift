import Dispatch

/// Runs CPU-bound or blocking `work` on a Dispatch thread and suspends until it is done.
///
/// Swift's cooperative pool has one thread per core. A decode that holds one for milliseconds
/// holds back every task queued behind it: progress events, the downloader's idle watchdog,
/// the caller's UI work. Decodes, transforms and disk reads run here instead, and callers
/// bound how many run at once (``WorkQueue``), so the cooperative threads stay free to coordinate.
func runBlocking<T: Sendable>(qos: DispatchQoS.QoSClass = .userInitiated, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: qos).async {
            continuation.resume(with: Result { try work() })
        }
    }
}

/// The non-throwing form of ``runBlocking(qos:_:)``.
func runBlocking<T: Sendable>(qos: DispatchQoS.QoSClass = .userInitiated, _ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global(qos: qos).async {
            continuation.resume(returning: work())
        }
    }
}

/// Runs blocking disk I/O in the process's blocking-I/O budget (``WorkQueue/blockingIO``), at
/// the calling task's priority. It waits for its slot even when the task is cancelled: a disk
/// cache's callers get their answer (a store lands) whatever happens to the task.
func runBlockingIO<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await WorkQueue.blockingIO.performIgnoringCancellation(priority: LoadPriority(Task.currentPriority), work)
}

/// The non-throwing form of ``runBlockingIO(_:)``.
func runBlockingIO<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await WorkQueue.blockingIO.performIgnoringCancellation(priority: LoadPriority(Task.currentPriority), work)
}
