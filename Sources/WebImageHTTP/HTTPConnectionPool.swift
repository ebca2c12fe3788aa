import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import WebImageSupport

/// Keep-alive HTTP/1.1 connections, at most ``maxConnectionsPerOrigin`` per scheme, host and port,
/// and HTTP/2 connections (ALPN `h2` over TLS, or h2c by prior knowledge), one per origin carrying
/// every load to it as a stream.
///
/// Built on SwiftNIO directly because a general-purpose client's per-request machinery (state
/// machines, request validation, delegate plumbing) cost as much CPU as moving the bytes: an image
/// loader sends nothing but GETs, so a connection here is a channel, a codec and one small handler.
/// Waiters for a busy origin are served first come, first served.
///
/// HTTP/2: while the first connection to an origin that may speak it is being opened, other loads
/// to the origin wait for it rather than open connections of their own; when ALPN picks `h2`, they
/// all get streams on it (as many as the server's `SETTINGS_MAX_CONCURRENT_STREAMS`, 100 until its
/// SETTINGS arrive, the rest wait for a stream to end: one connection per origin, as RFC 9113 §9.1
/// asks); when it picks
/// HTTP/1.1, they open connections as usual. A connection going away (GOAWAY) takes no new stream;
/// the next load opens a new connection.
///
/// Leasing takes a callback rather than suspending a task: a download runs from one event-loop
/// callback to the next (lease, request, response, next download) without waking a thread of
/// the cooperative pool in between.
final class HTTPConnectionPool: Sendable {
    /// What a lease is granted right away.
    private enum Grant {
        /// An idle connection, ready for a request.
        case connection(HTTPConnection)
        /// A stream slot reserved on an HTTP/2 connection.
        case stream(HTTP2Connection)
        /// A slot: the lease opens a connection of its own.
        case slot
    }

    /// Told the outcome of a lease, once.
    typealias LeaseCompletion = @Sendable (Result<any HTTPExchangeCarrier, any Error>) -> Void

    /// A lease not decided at once: waiting for a busy origin, or opening a connection.
    private struct PendingLease {
        let origin: HTTPOrigin
        /// How long opening its connection may take, TCP and TLS together.
        let connectTimeout: TimeAmount
        /// The load's priority (-2...2), the weight of its HTTP/2 stream.
        let priority: Int
        let completion: LeaseCompletion
        /// The channels opened for it so far (a host name may resolve to several addresses,
        /// tried in turn): closed when the lease is withdrawn or times out.
        var channels: [any Channel] = []
    }

    /// A connection waiting for its next exchange, since `since`.
    private struct IdleConnection {
        let connection: HTTPConnection
        let since: NIODeadline
    }

    /// What the origin's connections have spoken, once one was opened.
    private enum Learned { case unknown, http1, http2 }

    private struct PerOrigin {
        var idle: [IdleConnection] = []
        /// Connections open or being opened, idle or not (HTTP/2 ones included).
        var open = 0
        /// Connections being opened.
        var connecting = 0
        /// HTTP/2 connections that take new streams (one, normally; a GOAWAY takes one out).
        var http2: [HTTP2Connection] = []
        var learned = Learned.unknown
        /// Leases waiting for a connection or a slot, first come first served.
        var waiters: [Int] = []
    }

    private struct State {
        var origins: [HTTPOrigin: PerOrigin] = [:]
        var all: [ObjectIdentifier: HTTPConnection] = [:]
        /// Every open HTTP/2 connection, going away or not, for shutdown.
        var http2: [ObjectIdentifier: HTTP2Connection] = [:]
        /// Connections with an idle check scheduled: at most one each, so the event loop's timer
        /// heap stays small (a check per release made it grow with every request).
        var idleChecks: Set<ObjectIdentifier> = []
        /// Leases waiting or connecting, by id. A lease leaves when it gets its connection or is
        /// withdrawn: whoever takes it out calls its completion, so that happens once.
        var pending: [Int: PendingLease] = [:]
        var nextLeaseID = 0
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

        /// The next waiter of `entry` still pending, taken off the queue (it stays pending).
        mutating func nextWaiter(in entry: inout PerOrigin) -> Int? {
            while !entry.waiters.isEmpty {
                let id = entry.waiters.removeFirst()
                if pending[id] != nil { return id }
            }
            return nil
        }
    }

    let maxConnectionsPerOrigin: Int
    let group: any EventLoopGroup
    /// Which HTTP versions connections speak.
    let httpVersion: HTTPVersionPreference
    private let idleConnectionTimeout: TimeAmount
    private let allowsInvalidCertificates: Bool
    private let trustedCertificatesPEM: [String]
    private let systemTrustDirectory: String?
    private let addressPolicy: ConnectAddressPolicy?
    private let serverTrust: ServerTrust?
    private let nameResolver: NameResolver?
    /// Connections opened and reused, and requests, per origin.
    let metrics: ConnectionMetrics
    private let clientCertificate: ClientCertificate?
    // Made on the first https connection, off the event loop and while its TCP connect is under
    // way: reading trust roots (9 ms for a whole bundle, see SystemTrustRoots) is not paid by a
    // plain-http process, and does not hold the first connection back before it is dialled.
    private let tlsContext = Locked<EventLoopFuture<NIOSSLContext>?>(nil)
    private let state = Locked(State())

    /// A pool trusting the system's roots and `trustedCertificatesPEM` (extra CA or self-signed
    /// certificates, PEM), or any certificate with `allowsInvalidCertificates`.
    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, maxConnectionsPerOrigin: Int,
         allowsInvalidCertificates: Bool, trustedCertificatesPEM: [String] = [], systemTrustDirectory: String? = nil,
         idleConnectionTimeout: TimeAmount = .seconds(60), addressPolicy: ConnectAddressPolicy? = nil,
         serverTrust: ServerTrust? = nil, clientCertificate: ClientCertificate? = nil, nameResolver: NameResolver? = nil,
         connectionObserver: ConnectionEventObserver? = nil, httpVersion: HTTPVersionPreference = .auto) {
        self.httpVersion = httpVersion
        self.nameResolver = nameResolver
        metrics = ConnectionMetrics(observer: connectionObserver)
        self.addressPolicy = addressPolicy
        self.serverTrust = serverTrust
        self.clientCertificate = clientCertificate
        self.group = group
        self.maxConnectionsPerOrigin = max(1, maxConnectionsPerOrigin)
        self.idleConnectionTimeout = idleConnectionTimeout
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.trustedCertificatesPEM = trustedCertificatesPEM
        self.systemTrustDirectory = systemTrustDirectory
    }

    /// The client side of TLS: TLS 1.2 at least (1.0 and 1.1 are deprecated, RFC 8996), the
    /// system's trust roots (from `systemTrustDirectory` when it is a hashed directory, see
    /// ``SystemTrustRoots``) plus `trustedCertificatesPEM`, no verification with `allowsInvalidCertificates`.
    static func clientTLSConfiguration(allowsInvalidCertificates: Bool, trustedCertificatesPEM: [String],
                                       systemTrustDirectory: String? = nil,
                                       serverTrust: ServerTrust? = nil,
                                       clientCertificate: ClientCertificate? = nil,
                                       httpVersion: HTTPVersionPreference = .auto) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        #if os(Linux)
        if let systemTrustDirectory, let roots = SystemTrustRoots.hashedDirectory(systemTrustDirectory) {
            configuration.trustRoots = roots
        }
        #endif
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = httpVersion.alpnProtocols
        if allowsInvalidCertificates { configuration.certificateVerification = .none }
        // The pins and the evaluator decide alone; verification stays on so that they are asked.
        if serverTrust?.replacesDefaultValidation == true { configuration.certificateVerification = .noHostnameVerification }
        try clientCertificate?.apply(to: &configuration)
        if !trustedCertificatesPEM.isEmpty {
            let certificates = try trustedCertificatesPEM.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
            guard !certificates.isEmpty else { throw HTTPLoadError.invalidRequest("no certificate in the trusted PEM") }
            configuration.additionalTrustRoots = [.certificates(certificates)]
        }
        return configuration
    }

    /// The shared client TLS context, on `loop`: made once, on NIO's thread pool; a failure to
    /// make it fails https loads only.
    private func tlsContext(on loop: any EventLoop) -> EventLoopFuture<NIOSSLContext> {
        tlsContext.withLock { context in
            if let context { return context.hop(to: loop) }
            let made = NIOThreadPool.singleton.runIfActive(eventLoop: loop) { [self] in
                try NIOSSLContext(configuration: Self.clientTLSConfiguration(
                    allowsInvalidCertificates: allowsInvalidCertificates, trustedCertificatesPEM: trustedCertificatesPEM,
                    systemTrustDirectory: systemTrustDirectory, serverTrust: serverTrust,
                    clientCertificate: clientCertificate, httpVersion: httpVersion))
            }
            context = made
            return made
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
        enum Decision { case connection(HTTPConnection), stream(HTTP2Connection), connect(Int), wait(Int), fail(any Error) }
        let decision = state.withLock { state -> Decision in
            do {
                let grant = try grantNow(origin, in: &state)
                if case .connection(let connection)? = grant { return .connection(connection) }
                if case .stream(let connection)? = grant { return .stream(connection) }
                state.nextLeaseID += 1
                let id = state.nextLeaseID
                state.pending[id] = PendingLease(origin: origin, connectTimeout: connectTimeout, priority: priority,
                                                 completion: completion)
                guard grant != nil else {
                    state.origins[origin, default: PerOrigin()].waiters.append(id)
                    return .wait(id)
                }
                return .connect(id)
            } catch {
                return .fail(error)
            }
        }
        switch decision {
        case .connection(let connection):
            metrics.record(.reused, for: origin)
            metrics.record(.request, for: origin)
            completion(.success(connection))
            return nil
        case .stream(let connection):
            completion(.success(stream(on: connection, priority: priority, reused: true)))
            return nil
        case .connect(let id):
            connect(origin, lease: id)
            return id
        case .wait(let id):
            return id
        case .fail(let error):
            completion(.failure(error))
            return nil
        }
    }

    /// Withdraws lease `id`: it is told ``HTTPLoadError/cancelled`` at once, whether it was
    /// waiting or opening its connection (which is closed; its slot comes back when the
    /// connect ends). Nothing happens when the lease already got its connection.
    func cancelLease(_ id: Int) {
        abortLease(id, with: HTTPLoadError.cancelled)
    }

    /// Ends lease `id` with `error` unless it has ended.
    private func abortLease(_ id: Int, with error: any Error) {
        let aborted = state.withLock { state -> PendingLease? in
            guard let lease = state.pending.removeValue(forKey: id) else { return nil }
            if let index = state.origins[lease.origin]?.waiters.firstIndex(of: id) {
                state.origins[lease.origin]?.waiters.remove(at: index)
            }
            return lease
        }
        guard let aborted else { return }
        for channel in aborted.channels { channel.close(promise: nil) }
        aborted.completion(.failure(error))
    }

    /// An idle connection or a free slot for `origin`, taken; `nil` when the caller must wait.
    private func grantNow(_ origin: HTTPOrigin, in state: inout State) throws -> Grant? {
        guard !state.isShutDown else { throw HTTPLoadError.cancelled }
        var entry = state.origins[origin, default: PerOrigin()]
        defer { state.origins[origin] = entry }
        while let idle = entry.idle.popLast() {
            if idle.connection.channel.isActive { return .connection(idle.connection) }
            entry.open -= 1
            state.all[ObjectIdentifier(idle.connection)] = nil
        }
        for connection in entry.http2 where connection.reserveStream() { return .stream(connection) }
        let http2 = entry.learned == .http2 || (entry.learned == .unknown && httpVersion.expectsHTTP2(origin))
        // One HTTP/2 connection carries every load: a second opens only when none is open or
        // opening (the open one went away, or its limit of streams is reached: then the load waits).
        if http2, entry.connecting > 0 || !entry.http2.isEmpty { return nil }
        guard entry.open < maxConnectionsPerOrigin else { return nil }
        entry.open += 1
        entry.connecting += 1
        return .slot
    }

    /// A carrier for one exchange on a stream slot reserved on `connection`, counted.
    private func stream(on connection: HTTP2Connection, priority: Int, reused: Bool) -> HTTP2Stream {
        if reused { metrics.record(.reused, for: connection.origin) }
        metrics.record(.request, for: connection.origin)
        metrics.record(.stream, for: connection.origin)
        return HTTP2Stream(on: connection, weight: HTTP2ClientSettings.weight(forPriority: priority))
    }

    /// Hands what is free now (idle connections, HTTP/2 streams, slots to connect in) to the
    /// origin's waiters, first come first served, until one has to go on waiting.
    private func serviceWaiters(_ origin: HTTPOrigin) {
        enum Action { case connection(PendingLease, HTTPConnection), stream(PendingLease, HTTP2Connection), connect(Int) }
        let actions = state.withLock { state -> [Action] in
            var actions: [Action] = []
            while let id = state.origins[origin]?.waiters.first {
                guard state.pending[id] != nil else {
                    state.origins[origin]?.waiters.removeFirst()
                    continue
                }
                guard let grant = (try? grantNow(origin, in: &state)) ?? nil else { break }
                state.origins[origin]?.waiters.removeFirst()
                switch grant {
                case .slot:
                    actions.append(.connect(id))
                case .connection(let connection):
                    if let lease = state.pending.removeValue(forKey: id) { actions.append(.connection(lease, connection)) }
                case .stream(let connection):
                    if let lease = state.pending.removeValue(forKey: id) { actions.append(.stream(lease, connection)) }
                }
            }
            return actions
        }
        for action in actions {
            switch action {
            case .connect(let id): connect(origin, lease: id)
            case .connection(let lease, let connection):
                metrics.record(.reused, for: origin)
                metrics.record(.request, for: origin)
                lease.completion(.success(connection))
            case .stream(let lease, let connection):
                lease.completion(.success(stream(on: connection, priority: lease.priority, reused: true)))
            }
        }
    }

    /// What the pool does when an HTTP/2 connection's state changes.
    private func http2Changed(_ connection: HTTP2Connection, _ event: HTTP2Connection.Event) {
        let origin = connection.origin
        switch event {
        case .capacity:
            break
        case .goingAway:
            state.withLock { state in state.origins[origin]?.http2.removeAll { $0 === connection } }
        case .closed:
            state.withLock { state in
                guard state.http2.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
                state.origins[origin]?.http2.removeAll { $0 === connection }
                state.origins[origin]?.open -= 1
            }
        }
        serviceWaiters(origin)
    }

    /// Gives back a connection its exchange is done with; a waiter gets it, or it goes idle.
    /// Called once per exchange (by the connection when the exchange ends, or by an exchange
    /// that was cancelled before it sent anything).
    func release(_ carrier: any HTTPExchangeCarrier, reusable: Bool) {
        if let stream = carrier as? HTTP2Stream {
            // The stream is over (ended, or reset): its slot frees whatever the response said.
            return stream.connection.releaseStream()
        }
        guard let connection = carrier as? HTTPConnection else { return }
        enum Next { case none, idle(scheduleCheck: Bool), handOver(PendingLease), connect(Int) }
        let origin = connection.origin
        let reuse = reusable && connection.channel.isActive
        let (next, shutDown): (Next, Bool) = state.withLock { state in
            if state.isShutDown {
                state.all[ObjectIdentifier(connection)] = nil
                return (.none, true)
            }
            var entry = state.origins[origin, default: PerOrigin()]
            defer { state.origins[origin] = entry }
            let waiter = state.nextWaiter(in: &entry)
            if !reuse {
                state.all[ObjectIdentifier(connection)] = nil
                guard let waiter else {
                    entry.open -= 1
                    return (.none, false)
                }
                // The slot passes to the next waiter, who opens a connection of its own.
                entry.connecting += 1
                return (.connect(waiter), false)
            }
            guard let waiter, let lease = state.pending.removeValue(forKey: waiter) else {
                entry.idle.append(IdleConnection(connection: connection, since: .now()))
                return (.idle(scheduleCheck: state.idleChecks.insert(ObjectIdentifier(connection)).inserted), false)
            }
            return (.handOver(lease), false)
        }
        if shutDown || !reuse { connection.abort() }
        switch next {
        case .none: break
        case .idle(let scheduleCheck): if scheduleCheck { scheduleIdleCheck(connection, at: .now() + idleConnectionTimeout) }
        case .handOver(let lease):
            metrics.record(.reused, for: origin)
            metrics.record(.request, for: origin)
            lease.completion(.success(connection))
        case .connect(let id): connect(origin, lease: id)
        }
    }

    /// A slot given up without a connection (its connect failed): passes it on or frees it.
    private func releaseSlot(_ origin: HTTPOrigin) {
        let waiter = state.withLock { state -> Int? in
            guard var entry = state.origins[origin] else { return nil }
            defer { state.origins[origin] = entry }
            guard let waiter = state.nextWaiter(in: &entry) else {
                entry.open -= 1
                return nil
            }
            entry.connecting += 1
            return waiter
        }
        if let waiter { connect(origin, lease: waiter) }
    }

    // MARK: Connections

    /// Opens a connection for lease `id` in the slot it was granted; the slot is given up if that
    /// fails. The lease's connect timeout covers TCP and TLS: a host that accepts the
    /// connection and never finishes the handshake is cut off then, not when TCP keepalive gives up.
    ///
    /// Runs on the connection's event loop (it hops there first): the handlers that make the
    /// protocol (HTTP/2's above all, whose server speaks first with its SETTINGS) go on the
    /// channel in the same loop turn as its connect or TLS handshake completes. From another
    /// thread, the callbacks on an already-completed connect ran as separate loop tasks, and the
    /// server's preface could be read in between and dropped: the connection then failed with a
    /// protocol error (or "closed at once") under load.
    private func connect(_ origin: HTTPOrigin, lease id: Int, on chosenLoop: (any EventLoop)? = nil) {
        let loop = chosenLoop ?? group.next()
        guard loop.inEventLoop else {
            loop.execute { [self] in connect(origin, lease: id, on: loop) }
            return
        }
        guard let timeout = state.withLock({ $0.pending[id]?.connectTimeout }) else {
            // Withdrawn between being granted the slot and getting here.
            state.withLock { $0.origins[origin]?.connecting -= 1 }
            return releaseSlot(origin)
        }
        // Made while TCP connects; the TLS handlers go on once both are done.
        let tls = origin.scheme == "https" ? tlsContext(on: loop) : nil
        let host = origin.host
        // Through a proxy, the connection goes to the proxy; https is tunnelled with CONNECT first.
        let (connectHost, connectPort) = origin.proxy.map { ($0.host, $0.port) } ?? (host, origin.port)
        let tunnel = tls == nil ? nil : origin.proxy
        // An IP literal is connected to directly: no resolver, no happy-eyeballs race (which
        // cost a loopback download more than its request). Like browsers, send SNI and check
        // the name only for host names.
        let literalAddress = try? SocketAddress(ipAddress: connectHost, port: connectPort)
        let serverHostname = (try? SocketAddress(ipAddress: host, port: origin.port)) == nil ? host : nil
        // The channel runs on `loop`, so the handshake promise can be made before it exists.
        let tunnelReady = tunnel == nil ? nil : loop.makePromise(of: Void.self)
        let handshake = tls == nil ? nil : loop.makePromise(of: String?.self)
        let deadline = loop.scheduleTask(in: timeout) { [weak self] in
            self?.abortLease(id, with: HTTPLoadError.timedOut)
        }
        // ClientBootstrap is not Sendable: a lookup's callback makes its own from this.
        let makeBootstrap: @Sendable () -> ClientBootstrap = { [self] in
            ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { [self] channel in
                    // Recorded so a withdrawn or timed-out lease can close it.
                    let live = state.withLock { state -> Bool in
                        guard state.pending[id] != nil else { return false }
                        state.pending[id]?.channels.append(channel)
                        return true
                    }
                    guard live else { return channel.eventLoop.makeFailedFuture(HTTPLoadError.cancelled) }
                    return channel.eventLoop.makeCompletedFuture {
                        if let tunnel, let tunnelReady {
                            // TLS and HTTP go on once the tunnel is open (see below).
                            try channel.pipeline.syncOperations.addHandler(
                                ProxyTunnelHandler(target: origin, proxy: tunnel, ready: tunnelReady))
                        }
                    }
                }
        }
        let bootstrap = makeBootstrap()
        var opened: EventLoopFuture<any Channel>
        if let addressPolicy, origin.proxy != nil {
            // The proxy resolves the target's name itself; it is checked here first, so a name the
            // policy refuses is never sent (the proxy's own lookup may still differ: see the docs).
            // The proxy's address is the operator's choice and is not put to the policy.
            opened = PolicyResolver.resolve(host, port: origin.port, on: loop, policy: addressPolicy, resolver: nameResolver)
                .flatMap { _ in
                    literalAddress.map { makeBootstrap().connect(to: $0) } ?? makeBootstrap().connect(host: connectHost, port: connectPort)
                }
        } else if let addressPolicy {
            // Resolved and checked here, then connected to by address: the address the policy
            // approved is the one connected to (no second lookup a rebinding name could answer).
            // All of a name's approved addresses are raced (Happy Eyeballs), none other.
            opened = PolicyResolver.resolve(host, port: origin.port, on: loop, policy: addressPolicy, resolver: nameResolver)
                .flatMap { makeBootstrap().resolver(ResolvedAddresses($0, on: loop)).connect(host: host, port: origin.port) }
        } else if let literalAddress {
            opened = bootstrap.connect(to: literalAddress)
        } else if let nameResolver {
            opened = PolicyResolver.lookUp(connectHost, port: connectPort, on: loop, resolver: nameResolver)
                .flatMap { makeBootstrap().resolver(ResolvedAddresses($0, on: loop)).connect(host: connectHost, port: connectPort) }
        } else {
            // NIO resolves the name and races its IPv6 and IPv4 addresses itself (Happy Eyeballs).
            opened = bootstrap.connect(host: connectHost, port: connectPort)
        }
        if let tls, let handshake {
            // TLS starts once TCP is connected (through a proxy: once the tunnel is open) and the
            // context is made; the client speaks first, so nothing from the server can be missed.
            opened = opened.flatMap { channel in
                (tunnelReady?.futureResult ?? channel.eventLoop.makeSucceededVoidFuture()).and(tls).flatMapErrorThrowing { error in
                    handshake.fail(error)
                    channel.close(promise: nil)
                    throw error
                }.flatMapThrowing { _, context in
                    let handlers = try self.serverTrust?.makeHandlers(context: context, serverHostname: serverHostname, host: host)
                        ?? [NIOSSLClientHandler(context: context, serverHostname: serverHostname)]
                    try channel.pipeline.syncOperations.addHandlers(handlers)
                    try channel.pipeline.syncOperations.addHandler(TLSHandshakeWaiter(handshake))
                    return channel
                }
            }
        }
        opened.flatMap { channel -> EventLoopFuture<OpenedConnection> in
            // A refused certificate fails the connect, with BoringSSL's reason, before any request is written.
            let ready = handshake?.futureResult ?? channel.eventLoop.makeSucceededFuture(nil)
            return ready.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }.flatMapThrowing { [self] negotiated in
                // The protocol: what ALPN picked over TLS; over plain http, h2c only by prior knowledge.
                let http2 = tls == nil ? httpVersion.usesPriorKnowledge(origin) : negotiated == "h2"
                if tls != nil, httpVersion == .http2, !http2 {
                    channel.close(promise: nil)
                    throw HTTPLoadError.connectionFailed("the server did not agree to HTTP/2 (ALPN: \(negotiated ?? "none"))")
                }
                metrics.record(.opened, for: origin)
                if http2 { return .http2(try makeHTTP2Connection(on: channel, origin: origin)) }
                let connection = try HTTPConnection.make(on: channel, origin: origin)
                let admitted = state.withLock { state -> Bool in
                    guard !state.isShutDown else { return false }
                    state.all[ObjectIdentifier(connection)] = connection
                    return true
                }
                guard admitted else {
                    channel.close(promise: nil)
                    throw HTTPLoadError.cancelled
                }
                channel.closeFuture.whenComplete { [weak self] _ in self?.forgetIdle(connection) }
                return .http1(connection)
            }
        }.whenComplete { [self] result in
            deadline.cancel()
            if case .failure(let error) = result {
                // Whatever failed first, no promise of this connect is left pending.
                tunnelReady?.fail(error)
                handshake?.fail(error)
            }
            connected(origin, lease: id, result)
        }
    }

    /// A connection just opened, by the protocol it speaks.
    private enum OpenedConnection {
        case http1(HTTPConnection)
        case http2(HTTP2Connection)
    }

    /// Makes `channel` an HTTP/2 connection (``HTTP2Connection/make(on:origin:idleTimeout:observer:)``)
    /// whose events the pool watches. Call on the loop.
    private func makeHTTP2Connection(on channel: any Channel, origin: HTTPOrigin) throws -> HTTP2Connection {
        try HTTP2Connection.make(on: channel, origin: origin, idleTimeout: idleConnectionTimeout) { [weak self] connection, event in
            self?.http2Changed(connection, event)
        }
    }

    /// The connect of lease `id` ended: the lease gets the result, unless it was withdrawn or
    /// timed out meanwhile (it was told then): a connection goes to the pool, a failure frees the slot.
    /// The first connection to an origin tells what it speaks; loads that waited for that learn it.
    private func connected(_ origin: HTTPOrigin, lease id: Int, _ result: Result<OpenedConnection, any Error>) {
        switch result {
        case .success(.http1(let connection)):
            let (lease, learnedNow) = state.withLock { state -> (PendingLease?, Bool) in
                state.origins[origin]?.connecting -= 1
                let learnedNow = state.origins[origin]?.learned == .unknown
                if learnedNow { state.origins[origin]?.learned = .http1 }
                return (state.pending.removeValue(forKey: id), learnedNow)
            }
            if let lease {
                metrics.record(.request, for: origin)
                lease.completion(.success(connection))
            } else {
                release(connection, reusable: true)
            }
            if learnedNow { serviceWaiters(origin) }
        case .success(.http2(let connection)):
            let (lease, reserved, admitted) = state.withLock { state -> (PendingLease?, Bool, Bool) in
                state.origins[origin]?.connecting -= 1
                let lease = state.pending.removeValue(forKey: id)
                guard !state.isShutDown else { return (lease, false, false) }
                state.origins[origin, default: PerOrigin()].learned = .http2
                state.origins[origin, default: PerOrigin()].http2.append(connection)
                state.http2[ObjectIdentifier(connection)] = connection
                return (lease, lease != nil && connection.reserveStream(), true)
            }
            guard admitted else {
                connection.abort()
                lease?.completion(.failure(HTTPLoadError.cancelled))
                return
            }
            // Closed before it was registered: the close was not counted then.
            if !connection.channel.isActive { http2Changed(connection, .closed) }
            if let lease {
                if reserved {
                    lease.completion(.success(stream(on: connection, priority: lease.priority, reused: false)))
                } else {
                    lease.completion(.failure(HTTPLoadError.connectionFailed("the HTTP/2 connection closed at once")))
                }
            }
            serviceWaiters(origin)
        case .failure(let error):
            let lease = state.withLock { state -> PendingLease? in
                state.origins[origin]?.connecting -= 1
                return state.pending.removeValue(forKey: id)
            }
            releaseSlot(origin)
            lease?.completion(.failure(error))
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
        let (connections, leases) = state.withLock { state -> ([any Channel], [PendingLease]) in
            state.isShutDown = true
            let leases = Array(state.pending.values)
            let connections = state.all.values.map(\.channel) + state.http2.values.map(\.channel)
            state.http2 = [:]
            state.pending = [:]
            state.origins = [:]
            state.all = [:]
            return (connections, leases)
        }
        for lease in leases {
            for channel in lease.channels { channel.close(promise: nil) }
            lease.completion(.failure(HTTPLoadError.cancelled))
        }
        for channel in connections {
            try? await channel.close()
        }
    }
}

/// Completes when the TLS handshake does, then leaves the pipeline.
private final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    /// Told the protocol ALPN picked, if any.
    private let promise: EventLoopPromise<String?>

    init(_ promise: EventLoopPromise<String?>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            promise.succeed(negotiated)
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
