import Synchronization

/// A flag that stops a running decode: set from any thread, read by the decoder between rows.
///
/// A progressive load hands its partial decodes one of these (through
/// its incremental decoders), so cancelling the load stops the decode in flight at its next
/// band of rows instead of letting it finish a picture nobody will see. An encoded load hands its
/// rendering one (``ImageManager/PreparedRender/render``): set when the render's last waiter left
/// or its deadline passed.
public final class DecodeCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Creates a flag that is not set.
    public init() {}

    /// Sets the flag; it stays set.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }

    /// Throws ``WebImageError/cancelled`` once the flag is set.
    public func check() throws {
        if isCancelled { throw WebImageError.cancelled }
    }
}

/// An ``IncrementalImageDecoder`` that a load can stop in the middle of an update.
///
/// The built-in incremental decoders (JPEG, PNG, GIF, WebP) are all of this kind.
package protocol CancellableIncrementalDecoder: IncrementalImageDecoder {
    /// Once set (from any thread), the running update and every later one throw
    /// ``WebImageError/cancelled`` at their next check, between bands of rows.
    var cancellation: DecodeCancellation { get }
}

/// A ``DecodeCancellation`` carried in options, which are compared by what they produce: any two
/// compare equal, so a flag never splits a cache key. Without a flag, never stopped.
package struct StopFlag: Sendable, Hashable {
    /// The flag, if the caller can stop the work.
    package var cancellation: DecodeCancellation?

    /// A flag that `cancellation` sets, or none.
    package init(_ cancellation: DecodeCancellation? = nil) {
        self.cancellation = cancellation
    }

    /// Whether the work should stop.
    package var isSet: Bool { cancellation?.isCancelled ?? false }

    /// Throws ``WebImageError/cancelled`` once the flag is set.
    package func check() throws {
        if isSet { throw WebImageError.cancelled }
    }

    package static func == (_: StopFlag, _: StopFlag) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
