import NIOCore

/// The events of a connection's life: opened (or not), released, its HTTP/2 settings and
/// streams, closed, idle for too long.
extension HTTPConnectionPoolStateMachine {
    // MARK: Connects

    /// The connection opened for `waiter` speaks HTTP/1.1: the waiter gets it, or (withdrawn
    /// meanwhile) the next waiter or the idle list does. The first connection to an origin
    /// tells what it speaks: leases that waited for that learn it.
    mutating func http1Established(_ id: ConnectionID, origin: HTTPOrigin, for waiter: WaiterID, now: NIODeadline,
                                   isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        guard !isShutDown else { return [.closeConnection(id)] }
        var actions: [Action] = []
        origins[origin, default: PerOrigin()].connecting -= 1
        let learnedNow = origins[origin]?.learned == .unknown
        if learnedNow { origins[origin]?.learned = .http1 }
        http1[id] = HTTP1Record(origin: origin)
        if let waiter = waiters.removeValue(forKey: waiter) {
            actions.append(.executeOnHTTP1(waiter, id, reused: false))
        } else {
            actions += released(id, reusable: isOpen(id), now: now)
        }
        if learnedNow { dispatch(origin, isOpen: isOpen, &actions) }
        return actions
    }

    /// The connection opened for `waiter` speaks HTTP/2, allowing `maxStreams` streams and
    /// taking new ones (`acceptsStreams`) as it reported when it was registered: the waiter
    /// gets the first stream, the origin's queue the others.
    mutating func http2Established(_ id: ConnectionID, origin: HTTPOrigin, for waiter: WaiterID, maxStreams: Int,
                                   acceptsStreams: Bool, isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        guard !isShutDown else { return [.closeConnection(id)] }
        var actions: [Action] = []
        var entry = origins[origin, default: PerOrigin()]
        entry.connecting -= 1
        entry.learned = .http2
        if acceptsStreams { entry.http2.append(id) }
        origins[origin] = entry
        var record = HTTP2Record(origin: origin, maxStreams: maxStreams, acceptsStreams: acceptsStreams)
        if let waiter = waiters.removeValue(forKey: waiter) {
            if acceptsStreams, record.activeStreams < maxStreams {
                record.activeStreams += 1
                actions.append(.executeOnHTTP2(waiter, id, reused: false))
            } else {
                actions.append(.failWaiter(waiter, .http2ClosedAtOnce))
            }
        }
        http2[id] = record
        dispatch(origin, isOpen: isOpen, &actions)
        return actions
    }

    /// The connect for `waiter` failed: the waiter fails with it (unless withdrawn meanwhile), and
    /// its slot passes to the origin's next waiter, who tries a connection of its own.
    mutating func connectFailed(origin: HTTPOrigin, for waiter: WaiterID) -> [Action] {
        guard !isShutDown else { return [] }
        var actions: [Action] = []
        origins[origin, default: PerOrigin()].connecting -= 1
        if let waiter = waiters.removeValue(forKey: waiter) { actions.append(.failWaiter(waiter, .connectFailed)) }
        releaseSlot(origin, &actions)
        return actions
    }

    /// A connect not started because its waiter was withdrawn first: its slot passes on.
    mutating func connectAbandoned(origin: HTTPOrigin) -> [Action] {
        guard !isShutDown else { return [] }
        var actions: [Action] = []
        origins[origin, default: PerOrigin()].connecting -= 1
        releaseSlot(origin, &actions)
        return actions
    }

    // MARK: HTTP/1.1

    /// An exchange is done with HTTP/1.1 connection `id`. A reusable one goes to the next waiter
    /// or to the idle list (with an idle timer, unless one is pending); another is closed and
    /// its slot passes to the next waiter, who opens a connection of its own.
    mutating func released(_ id: ConnectionID, reusable: Bool, now: NIODeadline) -> [Action] {
        guard var record = http1[id], !isShutDown else { return [.closeConnection(id)] }
        var actions: [Action] = []
        var entry = origins[record.origin, default: PerOrigin()]
        defer { origins[record.origin] = entry }
        let next = nextWaiter(in: &entry)
        guard reusable else {
            http1[id] = nil
            actions.append(.closeConnection(id))
            if let next {
                entry.connecting += 1
                actions.append(.connect(next))
            } else {
                entry.open -= 1
            }
            return actions
        }
        if let next {
            waiters[next.id] = nil
            actions.append(.executeOnHTTP1(next, id, reused: true))
            return actions
        }
        entry.idle.append(IdleConnection(id: id, since: now))
        if !record.idleTimerScheduled {
            record.idleTimerScheduled = true
            http1[id] = record
            actions.append(.scheduleIdleTimer(id, at: now + idleTimeout))
        }
        return actions
    }

    /// Connection `id`'s idle timer fired: closed when it has sat idle for the whole timeout;
    /// while it keeps being used, the timer moves to the end of its current idle spell.
    mutating func idleTimerFired(_ id: ConnectionID, now: NIODeadline) -> [Action] {
        guard let record = http1[id] else { return [] }
        guard let since = origins[record.origin]?.idle.first(where: { $0.id == id })?.since else {
            // In use now: look again one timeout after it could next go idle.
            return [.scheduleIdleTimer(id, at: now + idleTimeout)]
        }
        let due = since + idleTimeout
        guard now >= due else { return [.scheduleIdleTimer(id, at: due)] }
        dropIdle(id, of: record.origin)
        return [.closeConnection(id)]
    }

    /// Forgets idle connection `id`: it is closed, or about to be.
    private mutating func dropIdle(_ id: ConnectionID, of origin: HTTPOrigin) {
        guard let index = origins[origin]?.idle.firstIndex(where: { $0.id == id }) else { return }
        origins[origin]?.idle.remove(at: index)
        origins[origin]?.open -= 1
        http1[id] = nil
    }

    // MARK: HTTP/2

    /// A stream of HTTP/2 connection `id` ended: its slot serves the next waiter.
    mutating func http2StreamClosed(_ id: ConnectionID, isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        guard var record = http2[id] else { return [] }
        record.activeStreams = max(0, record.activeStreams - 1)
        http2[id] = record
        var actions: [Action] = []
        dispatch(record.origin, isOpen: isOpen, &actions)
        return actions
    }

    /// HTTP/2 connection `id`'s server changed `SETTINGS_MAX_CONCURRENT_STREAMS`: a higher limit
    /// serves waiters; a lower one holds new streams back until enough have ended.
    mutating func http2SettingsChanged(_ id: ConnectionID, maxStreams: Int,
                                       isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        guard var record = http2[id] else { return [] }
        record.maxStreams = max(0, maxStreams)
        http2[id] = record
        var actions: [Action] = []
        dispatch(record.origin, isOpen: isOpen, &actions)
        return actions
    }

    /// HTTP/2 connection `id` takes no new stream (GOAWAY, an error, its idle close): the next
    /// lease opens a new connection.
    mutating func http2GoingAway(_ id: ConnectionID, isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        guard var record = http2[id] else { return [] }
        record.acceptsStreams = false
        http2[id] = record
        origins[record.origin]?.http2.removeAll { $0 == id }
        var actions: [Action] = []
        dispatch(record.origin, isOpen: isOpen, &actions)
        return actions
    }

    /// The pool handed `waiter` a stream of HTTP/2 connection `id` (``Action/executeOnHTTP2(_:_:reused:)``),
    /// but the connection refused it: its limit or state had changed and the event saying so had
    /// not come yet. The connection's current `maxStreams` and `acceptsStreams` are taken, and
    /// the waiter goes back to the head of its origin's queue.
    mutating func http2StreamRefused(_ id: ConnectionID, waiter: Waiter, maxStreams: Int, acceptsStreams: Bool,
                                     isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        guard !isShutDown else { return [.failWaiter(waiter, .shutDown)] }
        if var record = http2[id] {
            record.activeStreams = max(0, record.activeStreams - 1)
            record.maxStreams = max(0, maxStreams)
            if !acceptsStreams {
                record.acceptsStreams = false
                origins[record.origin]?.http2.removeAll { $0 == id }
            }
            http2[id] = record
        }
        waiters[waiter.id] = waiter
        origins[waiter.origin, default: PerOrigin()].queue.insert(waiter.id, at: 0)
        var actions: [Action] = []
        dispatch(waiter.origin, isOpen: isOpen, &actions)
        return actions
    }

    // MARK: Closing

    /// Connection `id`'s channel closed. An HTTP/2 one is forgotten and its slot serves a waiter;
    /// an idle HTTP/1.1 one is dropped; one carrying an exchange is dealt with when released.
    mutating func connectionClosed(_ id: ConnectionID, isOpen: (ConnectionID) -> Bool = { _ in true }) -> [Action] {
        if let record = http2.removeValue(forKey: id) {
            origins[record.origin]?.http2.removeAll { $0 == id }
            origins[record.origin]?.open -= 1
            var actions: [Action] = [.closeConnection(id)]
            dispatch(record.origin, isOpen: isOpen, &actions)
            return actions
        }
        guard let record = http1[id], origins[record.origin]?.idle.contains(where: { $0.id == id }) == true else { return [] }
        dropIdle(id, of: record.origin)
        return [.closeConnection(id)]
    }
}
