import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// Keep-alive HTTP/1.1 connections, at most ``maxConnectionsPerOrigin`` per scheme, host and port.
///
/// Built on SwiftNIO directly because a general-purpose client's per-request machinery (state
/// machines, request validation, delegate plumbing) cost as much CPU as moving the bytes: an image
/// loader sends nothing but GETs, so a connection here is a channel, a codec and one small handler.
/// Waiters for a busy origin are served first come, first served.
///
/// Leasing takes a callback rather than suspending a task: a download runs from one event-loop
/// callback to the next (lease, request, response, next download) without waking a thread of
/// the cooperative pool in between.
final class HTTPConnectionPool: Sendable {
    /// What a waiter is granted when a connection frees up.
    private enum Grant {
        /// An idle connection, ready for a request.
        case connection(HTTPConnection)
        /// A slot: the waiter opens a connection of its own.
        case slot
    }

    private struct Waiter {
        let id: Int
        let granted: @Sendable (Result<Grant, any Error>) -> Void
    }

    /// Told the outcome of a lease, once.
    typealias LeaseCompletion = @Sendable (Result<HTTPConnection, any Error>) -> Void

    /// A connection waiting for its next exchange, since `since`.
    private struct IdleConnection {
        let connection: HTTPConnection
        let since: NIODeadline
    }

    private struct PerOrigin {
        var idle: [IdleConnection] = []
        /// Connections open or being opened, idle or not.
        var open = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var origins: [HTTPOrigin: PerOrigin] = [:]
        var all: [ObjectIdentifier: HTTPConnection] = [:]
        /// Connections with an idle check scheduled: at most one each, so the event loop's timer
        /// heap stays small (a check per release made it grow with every request).
        var idleChecks: Set<ObjectIdentifier> = []
        var nextWaiterID = 0
        var isShutDown = false

        /// Forgets the idle `connection` of `origin` (it closed, or is about to be closed);
        /// `false` when it is not idle.
        mutating func dropIdle(_ connection: HTTPConnection) -> Bool {
            guard var entry = origins[connection.origin],
                  let index = entry.idle.firstIndex(where: { $0.connection === connection }) else { return false }
            entry.idle.remove(at: index)
            entry.open -= 1
            origins[connection.origin] = entry
            all[ObjectIdentifier(connection)] = nil
            idleChecks.remove(ObjectIdentifier(connection))
            return true
        }
    }

    let maxConnectionsPerOrigin: Int
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let idleConnectionTimeout: TimeAmount
    private let allowsInvalidCertificates: Bool
    // Made on the first https connection: loading the system's trust roots costs milliseconds
    // that a plain-http process should not pay at start.
    private let tlsContext = Locked<Result<NIOSSLContext, any Error>?>(nil)
    private let state = Locked(State())

    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, maxConnectionsPerOrigin: Int,
         allowsInvalidCertificates: Bool, connectTimeout: TimeAmount = .seconds(10),
         idleConnectionTimeout: TimeAmount = .seconds(60)) {
        self.group = group
        self.maxConnectionsPerOrigin = max(1, maxConnectionsPerOrigin)
        self.connectTimeout = connectTimeout
        self.idleConnectionTimeout = idleConnectionTimeout
        self.allowsInvalidCertificates = allowsInvalidCertificates
    }

    /// The shared client TLS context, made once; a failure to make it fails https loads only.
    private func makeTLSContext() throws -> NIOSSLContext {
        try tlsContext.withLock { context in
            if let context { return try context.get() }
            var configuration = TLSConfiguration.makeClientConfiguration()
            if allowsInvalidCertificates { configuration.certificateVerification = .none }
            let made = Result { try NIOSSLContext(configuration: configuration) }
            context = made
            return try made.get()
        }
    }

    // MARK: Leasing

    /// Hands `completion` a connection to `origin` for one exchange: an idle one at once, on the
    /// calling thread; else a new one, or the next to free up. Returns the waiter's id when the
    /// lease waits (for ``cancelLease(_:of:)``), `nil` when it was decided at once.
    @discardableResult
    func lease(_ origin: HTTPOrigin, _ completion: @escaping LeaseCompletion) -> Int? {
        let granted: @Sendable (Result<Grant, any Error>) -> Void = { [self] result in
            switch result {
            case .success(.connection(let connection)): completion(.success(connection))
            case .success(.slot): connect(origin, completion)
            case .failure(let error): completion(.failure(error))
            }
        }
        let decided = state.withLock { state -> Result<(Grant?, Int), any Error> in
            Result {
                if let grant = try grantNow(origin, in: &state) { return (grant, 0) }
                state.nextWaiterID += 1
                state.origins[origin, default: PerOrigin()].waiters.append(Waiter(id: state.nextWaiterID, granted: granted))
                return (nil, state.nextWaiterID)
            }
        }
        switch decided {
        case .success((let grant?, _)):
            granted(.success(grant))
            return nil
        case .success((nil, let id)):
            return id
        case .failure(let error):
            completion(.failure(error))
            return nil
        }
    }

    /// Gives up waiting: the waiter `id` (if still waiting) is told ``WebImageError/cancelled``.
    func cancelLease(_ id: Int, of origin: HTTPOrigin) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.origins[origin]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.origins[origin]?.waiters.remove(at: index)
        }
        waiter?.granted(.failure(WebImageError.cancelled))
    }

    /// An idle connection or a free slot for `origin`, taken; `nil` when the caller must wait.
    private func grantNow(_ origin: HTTPOrigin, in state: inout State) throws -> Grant? {
        guard !state.isShutDown else { throw WebImageError.cancelled }
        var entry = state.origins[origin, default: PerOrigin()]
        defer { state.origins[origin] = entry }
        while let idle = entry.idle.popLast() {
            if idle.connection.channel.isActive { return .connection(idle.connection) }
            entry.open -= 1
            state.all[ObjectIdentifier(idle.connection)] = nil
        }
        guard entry.open < maxConnectionsPerOrigin else { return nil }
        entry.open += 1
        return .slot
    }

    /// Gives back a connection its exchange is done with; a waiter gets it, or it goes idle.
    /// Called once per exchange (by the connection when the exchange ends, or by an exchange
    /// that was cancelled before it sent anything).
    func release(_ connection: HTTPConnection, reusable: Bool) {
        let origin = connection.origin
        let reuse = reusable && connection.channel.isActive
        let (grant, waiter, shutDown, scheduleCheck): (Grant?, Waiter?, Bool, Bool) = state.withLock { state in
            if state.isShutDown {
                state.all[ObjectIdentifier(connection)] = nil
                return (nil, nil, true, false)
            }
            var entry = state.origins[origin, default: PerOrigin()]
            defer { state.origins[origin] = entry }
            if !reuse {
                state.all[ObjectIdentifier(connection)] = nil
                guard !entry.waiters.isEmpty else {
                    entry.open -= 1
                    return (nil, nil, false, false)
                }
                // The slot passes to the next waiter, who opens a connection of its own.
                return (.slot, entry.waiters.removeFirst(), false, false)
            }
            guard !entry.waiters.isEmpty else {
                entry.idle.append(IdleConnection(connection: connection, since: .now()))
                return (nil, nil, false, state.idleChecks.insert(ObjectIdentifier(connection)).inserted)
            }
            return (.connection(connection), entry.waiters.removeFirst(), false, false)
        }
        if shutDown || !reuse { connection.abort() }
        if let grant, let waiter {
            waiter.granted(.success(grant))
        } else if scheduleCheck {
            scheduleIdleCheck(connection, at: .now() + idleConnectionTimeout)
        }
    }

    /// A slot given up without a connection (its connect failed): passes it on or frees it.
    private func releaseSlot(_ origin: HTTPOrigin) {
        let waiter = state.withLock { state -> Waiter? in
            guard var entry = state.origins[origin] else { return nil }
            defer { state.origins[origin] = entry }
            guard !entry.waiters.isEmpty else {
                entry.open -= 1
                return nil
            }
            return entry.waiters.removeFirst()
        }
        waiter?.granted(.success(.slot))
    }

    // MARK: Connections

    /// Opens a connection in the slot the caller was granted; the slot is given up if that fails.
    private func connect(_ origin: HTTPOrigin, _ completion: @escaping LeaseCompletion) {
        let tls: NIOSSLContext?
        do {
            tls = origin.scheme == "https" ? try makeTLSContext() : nil
        } catch {
            releaseSlot(origin)
            completion(.failure(error))
            return
        }
        let host = origin.host
        // An IP literal is connected to directly: no resolver, no happy-eyeballs race (which
        // cost a loopback download more than its request). Like browsers, send SNI and check
        // the name only for host names.
        let literalAddress = try? SocketAddress(ipAddress: host, port: origin.port)
        let serverHostname = literalAddress == nil ? host : nil
        // The channel runs on `loop`, so the handshake promise can be made before it exists.
        let loop = group.next()
        let handshake = tls == nil ? nil : loop.makePromise(of: Void.self)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls, let handshake {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                        try channel.pipeline.syncOperations.addHandler(TLSHandshakeWaiter(handshake))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                }
            }
        let connected = literalAddress.map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: host, port: origin.port)
        connected.flatMap { channel -> EventLoopFuture<HTTPConnection> in
            // A refused certificate fails the connect, with BoringSSL's reason, before any request is written.
            let ready = handshake?.futureResult ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }.flatMapThrowing { [self] in
                let handler = HTTPResponseHandler()
                try channel.pipeline.syncOperations.addHandler(handler)
                let connection = HTTPConnection(channel: channel, origin: origin, handler: handler)
                let admitted = state.withLock { state -> Bool in
                    guard !state.isShutDown else { return false }
                    state.all[ObjectIdentifier(connection)] = connection
                    return true
                }
                guard admitted else {
                    channel.close(promise: nil)
                    throw WebImageError.cancelled
                }
                channel.closeFuture.whenComplete { [weak self] _ in self?.forgetIdle(connection) }
                return connection
            }
        }.whenComplete { [self] result in
            if case .failure = result { releaseSlot(origin) }
            completion(result)
        }
    }

    /// Drops a connection that closed while idle (the server ended it, or the idle timer did).
    private func forgetIdle(_ connection: HTTPConnection) {
        _ = state.withLock { $0.dropIdle(connection) }
    }

    /// Closes `connection` once it has sat idle for the whole timeout; while it keeps being used,
    /// the check moves to the end of its current idle spell.
    private func scheduleIdleCheck(_ connection: HTTPConnection, at deadline: NIODeadline) {
        connection.eventLoop.scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            enum Verdict { case close, recheck(NIODeadline), forget }
            let verdict = state.withLock { state -> Verdict in
                let id = ObjectIdentifier(connection)
                guard state.all[id] != nil else {
                    state.idleChecks.remove(id)
                    return .forget
                }
                guard let since = state.origins[connection.origin]?.idle.first(where: { $0.connection === connection })?.since else {
                    // In use now: look again one timeout after it could next go idle.
                    return .recheck(.now() + idleConnectionTimeout)
                }
                let due = since + idleConnectionTimeout
                guard NIODeadline.now() >= due else { return .recheck(due) }
                // Taken out under the lock, so no lease can pick it up while it closes.
                _ = state.dropIdle(connection)
                return .close
            }
            switch verdict {
            case .close: connection.abort()
            case .recheck(let deadline): scheduleIdleCheck(connection, at: deadline)
            case .forget: break
            }
        }
    }

    /// Closes every connection; exchanges still running fail, later leases throw.
    func shutdown() async {
        let (connections, waiters) = state.withLock { state -> ([HTTPConnection], [Waiter]) in
            state.isShutDown = true
            let waiters = state.origins.values.flatMap(\.waiters)
            let connections = Array(state.all.values)
            state.origins = [:]
            state.all = [:]
            return (connections, waiters)
        }
        for waiter in waiters { waiter.granted(.failure(WebImageError.cancelled)) }
        for connection in connections {
            try? await connection.channel.close()
        }
    }
}

/// Completes when the TLS handshake does, then leaves the pipeline.
private final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let promise: EventLoopPromise<Void>

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            promise.succeed(())
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
    }
}
