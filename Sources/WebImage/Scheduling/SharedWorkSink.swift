/// Where one waiter of a ``SharedWork`` hears of it: callbacks, with no task or stream of the
/// work's own in between.
///
/// A stream waiter (``SharedWork/join(priority:)``) is one whose callbacks feed its stream; the
/// downloader's callers join with callbacks that feed their token's stream or call their
/// handlers straight from the connection's event loop.
struct SharedWorkSink<Value: Sendable>: Sendable {
    /// Whether `.response` and `.progress` events go to this waiter.
    var wantsProgress: Bool
    /// Whether ``receive`` runs under the work's lock, so that a late joiner's replay and every
    /// later event reach it in order. Only for a call that is cheap and does not come back into
    /// the work (yielding to a stream's continuation). A waiter that is not ordered is called
    /// after the lock is released and is replayed nothing: a replay would race the next event.
    var ordered: Bool
    /// Asked, outside the lock, before any waiter gets a response: `false` makes this waiter
    /// leave (as a downloader caller's response modifier does).
    var accepts: (@Sendable (ImageLoadResponse) -> Bool)?
    /// Gets each response, progress and partial event this waiter wants.
    var receive: @Sendable (SharedWorkEvent<Value>) -> Void
    /// Gets the end, once: the value, or the error the work failed with or the waiter left with.
    /// Always called outside the lock.
    var finish: @Sendable (Result<Value, any Error>) -> Void

    init(wantsProgress: Bool = true, ordered: Bool, accepts: (@Sendable (ImageLoadResponse) -> Bool)? = nil,
         receive: @escaping @Sendable (SharedWorkEvent<Value>) -> Void,
         finish: @escaping @Sendable (Result<Value, any Error>) -> Void) {
        self.wantsProgress = wantsProgress
        self.ordered = ordered
        self.accepts = accepts
        self.receive = receive
        self.finish = finish
    }

    /// Whether `event` goes to this waiter.
    func wants(_ event: SharedWorkEvent<Value>) -> Bool {
        switch event {
        case .response, .progress: wantsProgress
        case .partialData, .partialImage, .value: true
        }
    }
}

/// One waiter's place in a ``SharedWork``: how it changes its priority or leaves.
package struct SharedWorkWaiter<Value: Sendable>: Sendable {
    package let work: SharedWork<Value>
    package let id: Int

    package func setPriority(_ priority: LoadPriority) { work.setPriority(priority, waiter: id) }

    /// Leaves the work; the waiter's sink finishes with `error`.
    package func cancel(_ error: WebImageError = .cancelled) { work.leave(id, error: error) }
}

extension SharedWorkSink {
    /// A waiter that reads an event stream of its own. Ordered: yields go to the stream under
    /// the work's lock, so a late joiner gets its replay before anything newer.
    static func stream(_ continuation: AsyncThrowingStream<SharedWorkEvent<Value>, any Error>.Continuation,
                       accepts: (@Sendable (ImageLoadResponse) -> Bool)? = nil) -> Self {
        Self(ordered: true, accepts: accepts, receive: { continuation.yield($0) }, finish: { result in
            switch result {
            case .success(let value):
                continuation.yield(.value(value))
                continuation.finish()
            case .failure(let error):
                continuation.finish(throwing: error)
            }
        })
    }
}
