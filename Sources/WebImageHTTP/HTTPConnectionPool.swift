import NIOCore
import NIOPosix
import WebImageSupport

/// Keep-alive HTTP/1.1 connections, at most ``maxConnectionsPerOrigin`` per scheme, host and port,
/// and HTTP/2 connections (ALPN `h2` over TLS, or h2c by prior knowledge), one per origin carrying
/// every load to it as a stream.
///
/// Built on SwiftNIO directly because a general-purpose client's per-request machinery (state
/// machines, request validation, delegate plumbing) cost as much CPU as moving the bytes: an image
/// loader sends nothing but GETs, so a connection here is a channel, a codec and one small handler.
///
/// What to do is decided by ``HTTPConnectionPoolStateMachine`` (which lease gets which
/// connection or stream, when to connect, close or wait), under this pool's lock; the pool runs
/// its actions outside the lock. Channels are opened by ``HTTPConnectionFactory``.
///
/// Leasing takes a callback rather than suspending a task: a download runs from one event-loop
/// callback to the next (lease, request, response, next download) without waking a thread of
/// the cooperative pool in between.
final class HTTPConnectionPool: Sendable {
    typealias StateMachine = HTTPConnectionPoolStateMachine
    typealias ConnectionID = StateMachine.ConnectionID
    typealias WaiterID = StateMachine.WaiterID

    /// Told the outcome of a lease, once.
    typealias LeaseCompletion = @Sendable (Result<any HTTPExchangeCarrier, any Error>) -> Void

    /// A lease waiting or connecting, as far as I/O goes (its bookkeeping is the state machine's).
    private struct Lease: Sendable {
        let completion: LeaseCompletion
        /// The channels opened for it so far (a host name may resolve to several addresses,
        /// tried in turn): closed when the lease is withdrawn or times out.
        var channels: [any Channel] = []
    }

    /// A connection the state machine knows by id.
    private enum Connection: Sendable {
        case http1(HTTPConnection)
        case http2(HTTP2Connection)

        var channel: any Channel {
            switch self {
            case .http1(let connection): connection.channel
            case .http2(let connection): connection.channel
            }
        }

        func abort() {
            switch self {
            case .http1(let connection): connection.abort()
            case .http2(let connection): connection.abort()
            }
        }
    }

    /// The state machine's actions, with the leases and connections they name looked up.
    private enum Job: Sendable {
        case connect(StateMachine.Waiter)
        case hand(Lease, HTTPConnection, reused: Bool)
        case stream(Lease, HTTP2Connection, priority: Int, reused: Bool)
        case fail(Lease, any Error, closeChannels: Bool)
        case close(Connection)
        case scheduleIdleTimer(HTTPConnection, ConnectionID, NIODeadline)
    }

    private struct State {
        var machine: StateMachine
        /// Exactly the waiters of `machine`: an action deciding one takes it out.
        var leases: [WaiterID: Lease] = [:]
        /// Exactly the connections of `machine`: ``StateMachine/Action/closeConnection(_:)`` takes one out.
        var connections: [ConnectionID: Connection] = [:]
        /// The ids of the HTTP/1.1 connections, for ``release(_:reusable:)``.
        var http1IDs: [ObjectIdentifier: ConnectionID] = [:]
        var lastConnectionID = 0

        mutating func makeConnectionID() -> ConnectionID {
            lastConnectionID += 1
            return ConnectionID(lastConnectionID)
        }

        /// Whether an HTTP/1.1 connection's channel is still open, for the state machine.
        var isOpen: (ConnectionID) -> Bool {
            let connections = connections
            return { connections[$0]?.channel.isActive ?? false }
        }

        /// Feeds the state machine an event that may hand out idle connections.
        mutating func feed(_ event: (inout StateMachine, (ConnectionID) -> Bool) -> [StateMachine.Action]) -> [StateMachine.Action] {
            let isOpen = isOpen
            return event(&machine, isOpen)
        }

        /// Turns `actions` into jobs. An HTTP/2 stream is reserved on its connection here, under
        /// the pool's lock; one refused (the connection's limit or state changed a moment ago)
        /// puts its waiter back, and what the state machine does instead is taken in turn.
        mutating func jobs(for actions: [StateMachine.Action], connectError: (any Error)?) -> [Job] {
            var jobs: [Job] = []
            var actions = actions[...]
            while let action = actions.popFirst() {
                switch action {
                case .connect(let waiter):
                    jobs.append(.connect(waiter))
                case .executeOnHTTP1(let waiter, let id, let reused):
                    guard let lease = leases.removeValue(forKey: waiter.id) else { continue }
                    guard case .http1(let connection)? = connections[id] else {
                        jobs.append(.fail(lease, HTTPLoadError.connectionFailed("the pooled connection is gone"), closeChannels: true))
                        continue
                    }
                    jobs.append(.hand(lease, connection, reused: reused))
                case .executeOnHTTP2(let waiter, let id, let reused):
                    guard let lease = leases[waiter.id] else { continue }
                    guard case .http2(let connection)? = connections[id] else {
                        leases[waiter.id] = nil
                        jobs.append(.fail(lease, HTTPLoadError.connectionFailed("the pooled connection is gone"), closeChannels: true))
                        continue
                    }
                    // Reserved before the lease is taken: a refused one stays a waiter. (Nothing
                    // here may call back into the pool: its lock is held.)
                    guard connection.reserveStream() else {
                        let isOpen = isOpen
                        actions += machine.http2StreamRefused(id, waiter: waiter, maxStreams: connection.maxConcurrentStreams,
                                                              acceptsStreams: connection.isUsable, isOpen: isOpen)
                        continue
                    }
                    leases[waiter.id] = nil
                    jobs.append(.stream(lease, connection, priority: waiter.priority, reused: reused))
                case .failWaiter(let waiter, let reason):
                    guard let lease = leases.removeValue(forKey: waiter.id) else { continue }
                    jobs.append(.fail(lease, HTTPConnectionPool.error(for: reason, connectError: connectError),
                                      closeChannels: reason != .connectFailed && reason != .http2ClosedAtOnce))
                case .closeConnection(let id):
                    guard let connection = connections.removeValue(forKey: id) else { continue }
                    if case .http1(let http1) = connection { http1IDs[ObjectIdentifier(http1)] = nil }
                    jobs.append(.close(connection))
                case .scheduleIdleTimer(let id, let deadline):
                    guard case .http1(let connection)? = connections[id] else { continue }
                    jobs.append(.scheduleIdleTimer(connection, id, deadline))
                }
            }
            return jobs
        }
    }

    let group: any EventLoopGroup
    let maxConnectionsPerOrigin: Int
    /// Which HTTP versions connections speak.
    let httpVersion: HTTPVersionPreference
    /// Connections opened and reused, and requests, per origin.
    let metrics: ConnectionMetrics
    private let factory: HTTPConnectionFactory
    private let idleConnectionTimeout: TimeAmount
    private let state: Locked<State>

    /// A pool trusting the system's roots and `trustedCertificatesPEM` (extra CA or self-signed
    /// certificates, PEM), or any certificate with `allowsInvalidCertificates`.
    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, maxConnectionsPerOrigin: Int,
         allowsInvalidCertificates: Bool, trustedCertificatesPEM: [String] = [], systemTrustDirectory: String? = nil,
         idleConnectionTimeout: TimeAmount = .seconds(60), addressPolicy: ConnectAddressPolicy? = nil,
         serverTrust: ServerTrust? = nil, clientCertificate: ClientCertificate? = nil, nameResolver: NameResolver? = nil,
         connectionObserver: ConnectionEventObserver? = nil, httpVersion: HTTPVersionPreference = .auto) {
        self.group = group
        self.idleConnectionTimeout = idleConnectionTimeout
        metrics = ConnectionMetrics(observer: connectionObserver)
        factory = HTTPConnectionFactory(
            httpVersion: httpVersion, allowsInvalidCertificates: allowsInvalidCertificates,
            trustedCertificatesPEM: trustedCertificatesPEM, systemTrustDirectory: systemTrustDirectory,
            addressPolicy: addressPolicy, serverTrust: serverTrust, clientCertificate: clientCertificate,
            nameResolver: nameResolver)
        let machine = StateMachine(maxConnectionsPerOrigin: maxConnectionsPerOrigin, idleTimeout: idleConnectionTimeout,
                                   httpVersion: httpVersion)
        self.maxConnectionsPerOrigin = machine.maxConnectionsPerOrigin
        self.httpVersion = httpVersion
        state = Locked(State(machine: machine))
    }

    /// The error a lease failed for `reason` is told.
    private static func error(for reason: StateMachine.FailureReason, connectError: (any Error)?) -> any Error {
        switch reason {
        case .cancelled, .shutDown: HTTPLoadError.cancelled
        case .timedOut: HTTPLoadError.timedOut
        case .connectFailed: connectError ?? HTTPLoadError.connectionFailed("the connection could not be opened")
        case .http2ClosedAtOnce: HTTPLoadError.connectionFailed("the HTTP/2 connection closed at once")
        }
    }

    // MARK: Leasing

    /// Hands `completion` a connection to `origin` for one exchange: an idle one at once, on the
    /// calling thread; else a new one (opened within `connectTimeout`, TCP and TLS together, or
    /// failed with ``HTTPLoadError/timedOut``), or the next to free up. Returns the lease's id
    /// while it waits or connects (for ``cancelLease(_:)``), `nil` when it was decided at once.
    @discardableResult
    func lease(_ origin: HTTPOrigin, connectTimeout: TimeAmount, priority: Int = 0,
               _ completion: @escaping LeaseCompletion) -> Int? {
        let (id, jobs, waiting) = state.withLock { state -> (WaiterID, [Job], Bool) in
            let isOpen = state.isOpen
            let (id, actions) = state.machine.requestLease(origin: origin, priority: priority, connectTimeout: connectTimeout,
                                                           isOpen: isOpen)
            state.leases[id] = Lease(completion: completion)
            let jobs = state.jobs(for: actions, connectError: nil)
            return (id, jobs, state.machine.isWaiting(id))
        }
        run(jobs)
        return waiting ? id.value : nil
    }

    /// Withdraws lease `id`: it is told ``HTTPLoadError/cancelled`` at once, whether it was
    /// waiting or opening its connection (which is closed; its slot comes back when the
    /// connect ends). Nothing happens when the lease already got its connection.
    func cancelLease(_ id: Int) {
        perform { $0.machine.cancelWaiter(WaiterID(id), reason: .cancelled) }
    }

    /// Gives back a connection its exchange is done with; a waiter gets it, or it goes idle.
    /// Called once per exchange (by the connection when the exchange ends, or by an exchange
    /// that was cancelled before it sent anything).
    func release(_ carrier: any HTTPExchangeCarrier, reusable: Bool) {
        if let stream = carrier as? HTTP2Stream {
            // The stream is over (ended, or reset): its slot frees whatever the response said;
            // the connection tells the pool (``HTTP2Connection/Event/streamClosed``).
            return stream.connection.releaseStream()
        }
        guard let connection = carrier as? HTTPConnection else { return }
        let reuse = reusable && connection.channel.isActive
        let known = perform { state in
            state.http1IDs[ObjectIdentifier(connection)].map { state.machine.released($0, reusable: reuse, now: .now()) }
        }
        // Not the pool's any more (it shut down): nothing else will close it.
        if !known { connection.abort() }
    }

    /// Closes every connection; exchanges still running fail, later leases throw.
    func shutdown() async {
        let jobs = state.withLock { state in state.jobs(for: state.machine.shutdown(), connectError: nil) }
        var channels: [any Channel] = []
        for job in jobs {
            if case .close(let connection) = job { channels.append(connection.channel) } else { run([job]) }
        }
        // All at once: a TLS close waits a round trip for the peer's close_notify, and one after
        // another that was 0.31 s for six connections over a 50 ms link.
        await withTaskGroup(of: Void.self) { group in
            for channel in channels {
                group.addTask { try? await channel.close() }
            }
        }
    }

    // MARK: Running the state machine

    /// Feeds the state machine an event under the lock (`event` may register a connection
    /// first), then runs its actions outside it. `false` when `event` returned `nil`: it had
    /// nothing to tell.
    @discardableResult
    private func perform(connectError: (any Error)? = nil, _ event: (inout State) -> [StateMachine.Action]?) -> Bool {
        let jobs = state.withLock { state -> [Job]? in
            guard let actions = event(&state) else { return nil }
            return state.jobs(for: actions, connectError: connectError)
        }
        guard let jobs else { return false }
        run(jobs)
        return true
    }

    private func run(_ jobs: [Job]) {
        for job in jobs {
            switch job {
            case .connect(let waiter):
                connect(waiter)
            case .hand(let lease, let connection, let reused):
                if reused { metrics.record(.reused, for: connection.origin) }
                metrics.record(.request, for: connection.origin)
                lease.completion(.success(connection))
            case .stream(let lease, let connection, let priority, let reused):
                if reused { metrics.record(.reused, for: connection.origin) }
                metrics.record(.request, for: connection.origin)
                metrics.record(.stream, for: connection.origin)
                lease.completion(.success(HTTP2Stream(on: connection, weight: HTTP2ClientSettings.weight(forPriority: priority))))
            case .fail(let lease, let error, let closeChannels):
                if closeChannels { for channel in lease.channels { channel.close(promise: nil) } }
                lease.completion(.failure(error))
            case .close(let connection):
                connection.abort()
            case .scheduleIdleTimer(let connection, let id, let deadline):
                connection.eventLoop.scheduleTask(deadline: deadline) { [weak self] in
                    self?.perform { $0.machine.idleTimerFired(id, now: .now()) }
                }
            }
        }
    }

    // MARK: Connections

    /// Opens a connection for `waiter` in the slot it was granted; the slot is given up if that
    /// fails. The waiter's connect timeout covers TCP and TLS: a host that accepts the
    /// connection and never finishes the handshake is cut off then, not when TCP keepalive gives up.
    ///
    /// Runs on the connection's event loop (it hops there first): the handlers that make the
    /// protocol (HTTP/2's above all, whose server speaks first with its SETTINGS) go on the
    /// channel in the same loop turn as its connect or TLS handshake completes. From another
    /// thread, the callbacks on an already-completed connect ran as separate loop tasks, and the
    /// server's preface could be read in between and dropped: the connection then failed with a
    /// protocol error (or "closed at once") under load.
    private func connect(_ waiter: StateMachine.Waiter, on chosenLoop: (any EventLoop)? = nil) {
        let loop = chosenLoop ?? group.next()
        guard loop.inEventLoop else {
            loop.execute { [self] in connect(waiter, on: loop) }
            return
        }
        let id = waiter.id
        let origin = waiter.origin
        guard state.withLock({ $0.leases[id] != nil }) else {
            // Withdrawn between being granted the slot and getting here.
            perform { $0.machine.connectAbandoned(origin: origin) }
            return
        }
        let deadline = loop.scheduleTask(in: waiter.connectTimeout) { [weak self] in
            self?.perform { $0.machine.cancelWaiter(id, reason: .timedOut) }
        }
        factory.connect(origin, on: loop, timeout: waiter.connectTimeout) { [weak self] channel in
            // Recorded so a withdrawn or timed-out lease can close it.
            self?.state.withLock { state -> Bool in
                guard state.leases[id] != nil else { return false }
                state.leases[id]?.channels.append(channel)
                return true
            } ?? false
        }.flatMapThrowing { [self] connected -> (ConnectionID, Connection) in
            metrics.record(.opened, for: origin)
            let connectionID = state.withLock { $0.makeConnectionID() }
            guard connected.speaksHTTP2 else {
                return (connectionID, .http1(try HTTPConnection.make(on: connected.channel, origin: origin)))
            }
            let connection = try HTTP2Connection.make(on: connected.channel, origin: origin, idleTimeout: idleConnectionTimeout) {
                [weak self] _, event in self?.http2Changed(connectionID, event)
            }
            return (connectionID, .http2(connection))
        }.whenComplete { [self] result in
            deadline.cancel()
            connected(waiter, result)
        }
    }

    /// The connect for `waiter` ended: the state machine learns what it opened (and hands it
    /// on), or that it failed.
    private func connected(_ waiter: StateMachine.Waiter, _ result: Result<(ConnectionID, Connection), any Error>) {
        let origin = waiter.origin
        switch result {
        case .success((let id, .http1(let connection))):
            perform { state in
                state.connections[id] = .http1(connection)
                state.http1IDs[ObjectIdentifier(connection)] = id
                return state.feed { $0.http1Established(id, origin: origin, for: waiter.id, now: .now(), isOpen: $1) }
            }
            // Drops the connection if it closes while idle (the server ended it).
            connection.channel.closeFuture.whenComplete { [weak self] _ in
                self?.perform { $0.machine.connectionClosed(id) }
            }
        case .success((let id, .http2(let connection))):
            perform { state in
                state.connections[id] = .http2(connection)
                return state.feed {
                    $0.http2Established(id, origin: origin, for: waiter.id, maxStreams: connection.maxConcurrentStreams,
                                        acceptsStreams: connection.isUsable, isOpen: $1)
                }
            }
            // Closed before it was registered: that close was not counted then.
            if !connection.channel.isActive { http2Changed(id, .closed) }
        case .failure(let error):
            perform(connectError: error) { $0.machine.connectFailed(origin: origin, for: waiter.id) }
        }
    }

    /// What the pool does when an HTTP/2 connection's state changes.
    private func http2Changed(_ id: ConnectionID, _ event: HTTP2Connection.Event) {
        perform { state in
            state.feed { machine, isOpen in
                switch event {
                case .streamClosed: machine.http2StreamClosed(id, isOpen: isOpen)
                case .settings(let limit): machine.http2SettingsChanged(id, maxStreams: limit, isOpen: isOpen)
                case .goingAway: machine.http2GoingAway(id, isOpen: isOpen)
                case .closed: machine.connectionClosed(id, isOpen: isOpen)
                }
            }
        }
    }
}
