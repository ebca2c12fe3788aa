import NIOConcurrencyHelpers

/// A value that only one thread touches at a time, guarded by a pthread mutex.
///
/// The project's one lock. It stands in for `Synchronization.Mutex`, whose futex ThreadSanitizer
/// does not model on Linux: every access to `Mutex`-guarded state showed as a data race there, so
/// real races drowned among false ones. TSan models pthread mutexes (through NIO's `NIOLock`), so
/// with this type a TSan report is worth reading.
///
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`, which holds `lock`.
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = NIOLock()
    @usableFromInline var value: Value

    /// Creates the lock holding `initialValue`.
    @inlinable
    package init(_ initialValue: consuming sending Value) {
        value = initialValue
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
