import NIOCore

/// The connection pool's bookkeeping, as a value: waiting leases per origin, idle HTTP/1.1
/// connections, HTTP/2 connections and their streams, the per-origin limit, idle expiry,
/// failed connects and shutdown. Each event (a lease asked for, a connection opened, released or
/// closed, a timer fired…) returns the ``Action``s the pool is to take; nothing here touches a
/// socket, a lock or a clock, so tests drive every transition with made-up ids.
///
/// The pool (``HTTPConnectionPool``) keeps it under its lock and runs the actions outside it,
/// as AsyncHTTPClient's pool does with its own state machine.
///
/// Leases are served first come, first served per origin (the priority only sets an HTTP/2
/// stream's weight). While the first connection to an origin that may speak HTTP/2 is being
/// opened, other leases wait for it; once it speaks HTTP/2 they share it, up to its
/// `SETTINGS_MAX_CONCURRENT_STREAMS`.
struct HTTPConnectionPoolStateMachine {
    /// The pool's name for one of its connections, unique for the pool's life: a stale timer or
    /// event for a connection gone never reaches another one.
    struct ConnectionID: Hashable, Sendable, Comparable {
        let value: Int
        init(_ value: Int) { self.value = value }
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    }

    /// A lease, from when it is asked for until it gets a connection or fails.
    struct WaiterID: Hashable, Sendable, Comparable {
        let value: Int
        init(_ value: Int) { self.value = value }
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    }

    /// What the pool needs of a lease to act on it.
    struct Waiter: Equatable, Sendable {
        let id: WaiterID
        let origin: HTTPOrigin
        /// The load's priority (-2...2): the weight of its HTTP/2 stream.
        let priority: Int
        /// How long opening a connection for it may take, TCP and TLS together.
        let connectTimeout: TimeAmount
    }

    /// Why a lease fails.
    enum FailureReason: Equatable, Sendable {
        /// Withdrawn by its load.
        case cancelled
        /// Its connect outlasted its connect timeout.
        case timedOut
        /// The pool shut down.
        case shutDown
        /// The connection opened for it failed (the pool has the error).
        case connectFailed
        /// Its new HTTP/2 connection took no stream.
        case http2ClosedAtOnce
    }

    /// What the pool is to do, in order.
    enum Action: Equatable, Sendable {
        /// Open a connection to the waiter's origin for it; the result comes back as
        /// ``http1Established(_:origin:for:now:isOpen:)``, ``http2Established(_:origin:for:maxStreams:acceptsStreams:isOpen:)``
        /// or ``connectFailed(origin:for:isOpen:)``.
        case connect(Waiter)
        /// Hand the waiter HTTP/1.1 connection `ConnectionID` for one exchange; `reused` when
        /// it carried one before.
        case executeOnHTTP1(Waiter, ConnectionID, reused: Bool)
        /// Hand the waiter a stream on HTTP/2 connection `ConnectionID` (counted here already).
        case executeOnHTTP2(Waiter, ConnectionID, reused: Bool)
        /// Tell the waiter it failed.
        case failWaiter(Waiter, FailureReason)
        /// Close the connection (it may be closed already) and forget it: no record of it is left.
        case closeConnection(ConnectionID)
        /// Report ``idleTimerFired(_:now:)`` for the connection at the deadline.
        case scheduleIdleTimer(ConnectionID, at: NIODeadline)
    }

    /// What an origin's connections turned out to speak.
    enum Learned: Equatable, Sendable { case unknown, http1, http2 }

    struct IdleConnection {
        let id: ConnectionID
        let since: NIODeadline
    }

    struct PerOrigin {
        /// Most recently released last: reuse takes the warmest.
        var idle: [IdleConnection] = []
        /// Connections open or being opened, idle or not, HTTP/2 ones included: what the limit counts.
        var open = 0
        var connecting = 0
        /// HTTP/2 connections taking new streams (one, normally; a GOAWAY takes one out).
        var http2: [ConnectionID] = []
        var learned = Learned.unknown
        /// Leases waiting for a connection, a stream or a slot, in arrival order.
        var queue: [WaiterID] = []
    }

    struct HTTP1Record {
        let origin: HTTPOrigin
        /// At most one idle timer per connection, so the event loop's timer heap stays small (a
        /// timer per release made it grow with every request).
        var idleTimerScheduled = false
    }

    struct HTTP2Record {
        let origin: HTTPOrigin
        /// Streams handed out and not yet closed.
        var activeStreams = 0
        /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`, as the connection last reported it.
        var maxStreams: Int
        /// Takes new streams: not going away, not closed.
        var acceptsStreams: Bool
    }

    /// What a lease can be given right away.
    enum Grant: Equatable {
        case connection(ConnectionID)
        case stream(ConnectionID)
        /// Room to open a connection of its own.
        case slot
    }

    let maxConnectionsPerOrigin: Int
    let idleTimeout: TimeAmount
    let httpVersion: HTTPVersionPreference

    var origins: [HTTPOrigin: PerOrigin] = [:]
    /// Every HTTP/1.1 connection open, idle or carrying an exchange.
    var http1: [ConnectionID: HTTP1Record] = [:]
    /// Every HTTP/2 connection open, going away or not.
    var http2: [ConnectionID: HTTP2Record] = [:]
    /// Leases waiting or connecting. A lease leaves when it is handed a connection or failed:
    /// exactly one action decides it.
    var waiters: [WaiterID: Waiter] = [:]
    var isShutDown = false
    private var lastWaiterID = 0

    init(maxConnectionsPerOrigin: Int, idleTimeout: TimeAmount, httpVersion: HTTPVersionPreference) {
        self.maxConnectionsPerOrigin = max(1, maxConnectionsPerOrigin)
        self.idleTimeout = idleTimeout
        self.httpVersion = httpVersion
    }

    // MARK: Leases

    /// A lease for one exchange with `origin`: an idle connection or a stream at once, else a
    /// slot to open a connection in, else a place in the origin's queue. `isOpen` tells whether
    /// an idle connection's channel is still open (a dead one is dropped rather than handed out).
    mutating func requestLease(origin: HTTPOrigin, priority: Int, connectTimeout: TimeAmount,
                               isOpen: (ConnectionID) -> Bool = { _ in true }) -> (WaiterID, [Action]) {
        lastWaiterID += 1
        let waiter = Waiter(id: WaiterID(lastWaiterID), origin: origin, priority: priority, connectTimeout: connectTimeout)
        guard !isShutDown else { return (waiter.id, [.failWaiter(waiter, .shutDown)]) }
        var actions: [Action] = []
        switch grant(origin, isOpen: isOpen, &actions) {
        case .connection(let connection):
            actions.append(.executeOnHTTP1(waiter, connection, reused: true))
        case .stream(let connection):
            actions.append(.executeOnHTTP2(waiter, connection, reused: true))
        case .slot:
            waiters[waiter.id] = waiter
            actions.append(.connect(waiter))
        case nil:
            waiters[waiter.id] = waiter
            origins[origin, default: PerOrigin()].queue.append(waiter.id)
        }
        return (waiter.id, actions)
    }

    /// Withdraws a lease waiting or connecting (cancelled, or its connect timed out). Its
    /// connect, if any, goes on; what it opens comes to the pool.
    mutating func cancelWaiter(_ id: WaiterID, reason: FailureReason) -> [Action] {
        guard let waiter = waiters.removeValue(forKey: id) else { return [] }
        origins[waiter.origin]?.queue.removeAll { $0 == id }
        return [.failWaiter(waiter, reason)]
    }

    /// Whether lease `id` still waits or connects.
    func isWaiting(_ id: WaiterID) -> Bool { waiters[id] != nil }

    /// Fails every lease and closes every connection; later leases fail at once.
    mutating func shutdown() -> [Action] {
        isShutDown = true
        let failed = waiters.values.sorted { $0.id < $1.id }.map { Action.failWaiter($0, .shutDown) }
        let closed = (Array(http1.keys) + Array(http2.keys)).sorted().map(Action.closeConnection)
        waiters = [:]
        origins = [:]
        http1 = [:]
        http2 = [:]
        return failed + closed
    }

    // MARK: Granting

    /// An idle connection, a stream or a slot for `origin`, taken; `nil` when a lease must wait.
    mutating func grant(_ origin: HTTPOrigin, isOpen: (ConnectionID) -> Bool, _ actions: inout [Action]) -> Grant? {
        guard !isShutDown else { return nil }
        var entry = origins[origin, default: PerOrigin()]
        defer { origins[origin] = entry }
        while let idle = entry.idle.popLast() {
            if isOpen(idle.id) { return .connection(idle.id) }
            entry.open -= 1
            http1[idle.id] = nil
            actions.append(.closeConnection(idle.id))
        }
        for id in entry.http2 {
            guard var record = http2[id], record.acceptsStreams, record.activeStreams < record.maxStreams else { continue }
            record.activeStreams += 1
            http2[id] = record
            return .stream(id)
        }
        let expectsHTTP2 = entry.learned == .http2 || (entry.learned == .unknown && httpVersion.expectsHTTP2(origin))
        // One HTTP/2 connection carries every load (RFC 9113 §9.1): a second opens only when none
        // is open or opening; while the open one is full, leases wait for a stream.
        if expectsHTTP2, entry.connecting > 0 || !entry.http2.isEmpty { return nil }
        guard entry.open < maxConnectionsPerOrigin else { return nil }
        entry.open += 1
        entry.connecting += 1
        return .slot
    }

    /// Hands what is free for `origin` to its queue, in order, until a lease has to go on waiting.
    mutating func dispatch(_ origin: HTTPOrigin, isOpen: (ConnectionID) -> Bool, _ actions: inout [Action]) {
        while let id = origins[origin]?.queue.first {
            guard let waiter = waiters[id] else {
                origins[origin]?.queue.removeFirst()
                continue
            }
            guard let granted = grant(origin, isOpen: isOpen, &actions) else { break }
            origins[origin]?.queue.removeFirst()
            switch granted {
            case .slot:
                actions.append(.connect(waiter))
            case .connection(let connection):
                waiters[id] = nil
                actions.append(.executeOnHTTP1(waiter, connection, reused: true))
            case .stream(let connection):
                waiters[id] = nil
                actions.append(.executeOnHTTP2(waiter, connection, reused: true))
            }
        }
    }

    /// The first lease of `entry`'s queue still waiting, taken off the queue (it stays a waiter).
    mutating func nextWaiter(in entry: inout PerOrigin) -> Waiter? {
        while !entry.queue.isEmpty {
            if let waiter = waiters[entry.queue.removeFirst()] { return waiter }
        }
        return nil
    }

    /// A slot given up without a connection passes to the origin's next waiter, or is freed.
    mutating func releaseSlot(_ origin: HTTPOrigin, _ actions: inout [Action]) {
        guard var entry = origins[origin] else { return }
        defer { origins[origin] = entry }
        guard let waiter = nextWaiter(in: &entry) else {
            entry.open -= 1
            return
        }
        entry.connecting += 1
        actions.append(.connect(waiter))
    }
}
