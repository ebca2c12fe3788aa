/// The rules of one piece of work that many callers wait for, with no lock of its own: the
/// owner keeps it under its lock (``SharedWork`` under its own; the downloader under the one
/// that also guards its queue, so joining a download costs no second lock).
///
/// - The work's priority is the highest among the waiters still there: raised by a joiner or a
///   raise, lowered when the highest one leaves or lowers its own.
/// - Events remembered in a replay slot (the last response, the last progress) are handed to
///   each late joiner, in slot order, before anything later.
/// - The last waiter to leave ends the work (``Departure/last(_:)``); the result goes to
///   every waiter still there (``removeAll()``).
///
/// Every mutation returns what changed; the owner acts on it (re-sorts a queue, cancels a
/// task, calls sinks) after releasing its lock.
struct SharedWorkWaiters<Sink, Event> {
    struct Waiter {
        var priority: LoadPriority
        var sink: Sink
    }

    /// How a waiter left.
    enum Departure {
        /// It was the last: the work should stop.
        case last(Sink)
        /// Others still wait; `priority` is the work's new priority when it fell.
        case left(Sink, priority: LoadPriority?)
    }

    private(set) var waiters: [Int: Waiter] = [:]
    /// The priority the work should run at: the highest among the waiters (the first waiter's
    /// until anyone joins or leaves).
    private(set) var priority: LoadPriority
    private var replay: [Event?]

    /// - Parameter replaySlots: how many kinds of event a late joiner is replayed (the last of each).
    init(priority: LoadPriority, replaySlots: Int = 1) {
        self.priority = priority
        replay = Array(repeating: nil, count: max(0, replaySlots))
    }

    var isEmpty: Bool { waiters.isEmpty }
    var count: Int { waiters.count }

    /// Adds waiter `id`; returns the events to replay to it and the work's new priority if it rose.
    mutating func join(_ id: Int, priority: LoadPriority, sink: Sink) -> (replay: [Event], raised: LoadPriority?) {
        let first = waiters.isEmpty
        waiters[id] = Waiter(priority: priority, sink: sink)
        var raised: LoadPriority?
        if first {
            if priority != self.priority {
                self.priority = priority
                raised = priority
            }
        } else if priority > self.priority {
            self.priority = priority
            raised = priority
        }
        return (replay.compactMap { $0 }, raised)
    }

    /// Changes waiter `id`'s priority; returns the work's new priority if it changed.
    mutating func setPriority(_ priority: LoadPriority, of id: Int) -> LoadPriority? {
        guard waiters[id] != nil else { return nil }
        waiters[id]?.priority = priority
        return refresh()
    }

    /// Removes waiter `id`; `nil` when it was not waiting.
    mutating func leave(_ id: Int) -> Departure? {
        guard let waiter = waiters.removeValue(forKey: id) else { return nil }
        if waiters.isEmpty { return .last(waiter.sink) }
        return .left(waiter.sink, priority: refresh())
    }

    /// Keeps `event` as the last of its kind, for late joiners.
    mutating func remember(_ event: Event, slot: Int = 0) {
        guard replay.indices.contains(slot) else { return }
        replay[slot] = event
    }

    /// The events a joiner would be replayed now.
    var replayed: [Event] { replay.compactMap { $0 } }

    /// Takes every waiter out (the work ended); returns their sinks.
    mutating func removeAll() -> [Sink] {
        defer { waiters.removeAll() }
        // Closures, not key paths, here and below: in unspecialized generic code (a
        // `SharedWork<Value>` of another module) a key path is built at run time on every call.
        // Two joins, a leave and this took 5.5-6.7 µs with key paths, 3.1-3.7 µs with closures
        // (docs/BENCHMARKS.md, 2026-12-02 later).
        return waiters.values.map { $0.sink }
    }

    private mutating func refresh() -> LoadPriority? {
        guard let highest = waiters.values.lazy.map({ $0.priority }).max(), highest != priority else { return nil }
        priority = highest
        return highest
    }
}

extension SharedWorkWaiters: Sendable where Sink: Sendable, Event: Sendable {}
extension SharedWorkWaiters.Waiter: Sendable where Sink: Sendable {}
