import NIOCore
import NIOPosix
import NIOSSL
import WebImageSupport

/// Opens the pool's channels: TCP (to the origin, or to its proxy, with a CONNECT tunnel for
/// https), the connect-address policy and name resolver (Happy Eyeballs over the addresses they
/// approve), then TLS with ALPN. What speaks over the channel is the pool's business
/// (``HTTPConnection/make(on:origin:)``, ``HTTP2Connection/make(on:origin:idleTimeout:observer:)``).
final class HTTPConnectionFactory: Sendable {
    /// A channel ready for HTTP, and whether it speaks HTTP/2.
    struct Connected: Sendable {
        let channel: any Channel
        let speaksHTTP2: Bool
    }

    /// Reads of up to 1 MiB once a body keeps filling them (NIO's default stops at 64 KiB): a
    /// 2.3 MB image arrives in a few reads, wake-ups and buffers, not 36 of each.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 1 << 20)

    let httpVersion: HTTPVersionPreference
    private let allowsInvalidCertificates: Bool
    private let trustedCertificatesPEM: [String]
    private let systemTrustDirectory: String?
    private let addressPolicy: ConnectAddressPolicy?
    private let serverTrust: ServerTrust?
    private let nameResolver: NameResolver?
    private let clientCertificate: ClientCertificate?
    // Made on the first https connection, off the event loop and while its TCP connect is under
    // way: reading trust roots (9 ms for a whole bundle, see SystemTrustRoots) is not paid by a
    // plain-http process, and does not hold the first connection back before it is dialled.
    private let tlsContext = Locked<EventLoopFuture<NIOSSLContext>?>(nil)

    init(httpVersion: HTTPVersionPreference, allowsInvalidCertificates: Bool, trustedCertificatesPEM: [String],
         systemTrustDirectory: String?, addressPolicy: ConnectAddressPolicy?, serverTrust: ServerTrust?,
         clientCertificate: ClientCertificate?, nameResolver: NameResolver?) {
        self.httpVersion = httpVersion
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.trustedCertificatesPEM = trustedCertificatesPEM
        self.systemTrustDirectory = systemTrustDirectory
        self.addressPolicy = addressPolicy
        self.serverTrust = serverTrust
        self.clientCertificate = clientCertificate
        self.nameResolver = nameResolver
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

    /// Opens a channel to `origin` on `loop`, which must be the current one: TCP within
    /// `timeout`, the proxy tunnel, TLS and ALPN. `register` is told each channel as it is made
    /// (a name may resolve to several addresses, tried in turn) so the caller can close them
    /// if it gives up; `false` refuses the channel (the lease is gone). The result completes on
    /// `loop`, in the loop turn the handshake ends in: callbacks added to it at once can put
    /// the protocol's handlers on the channel before the server's first bytes are read.
    func connect(_ origin: HTTPOrigin, on loop: any EventLoop, timeout: TimeAmount,
                 register: @escaping @Sendable (any Channel) -> Bool) -> EventLoopFuture<Connected> {
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
        // ClientBootstrap is not Sendable: a lookup's callback makes its own from this.
        let makeBootstrap: @Sendable () -> ClientBootstrap = {
            ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelOption(.recvAllocator, value: Self.receiveBuffers)
                .channelInitializer { channel in
                    guard register(channel) else { return channel.eventLoop.makeFailedFuture(HTTPLoadError.cancelled) }
                    return channel.eventLoop.makeCompletedFuture {
                        if let tunnel, let tunnelReady {
                            // TLS and HTTP go on once the tunnel is open (see below).
                            try channel.pipeline.syncOperations.addHandler(
                                ProxyTunnelHandler(target: origin, proxy: tunnel, ready: tunnelReady))
                        }
                    }
                }
        }
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
            opened = makeBootstrap().connect(to: literalAddress)
        } else if let nameResolver {
            opened = PolicyResolver.lookUp(connectHost, port: connectPort, on: loop, resolver: nameResolver)
                .flatMap { makeBootstrap().resolver(ResolvedAddresses($0, on: loop)).connect(host: connectHost, port: connectPort) }
        } else {
            // NIO resolves the name and races its IPv6 and IPv4 addresses itself (Happy Eyeballs).
            opened = makeBootstrap().connect(host: connectHost, port: connectPort)
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
        let connected = opened.flatMap { [httpVersion] channel -> EventLoopFuture<Connected> in
            // A refused certificate fails the connect, with BoringSSL's reason, before any request is written.
            let ready = handshake?.futureResult ?? channel.eventLoop.makeSucceededFuture(nil)
            return ready.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }.flatMapThrowing { negotiated in
                // The protocol: what ALPN picked over TLS; over plain http, h2c only by prior knowledge.
                let http2 = tls == nil ? httpVersion.usesPriorKnowledge(origin) : negotiated == "h2"
                if tls != nil, httpVersion == .http2, !http2 {
                    channel.close(promise: nil)
                    throw HTTPLoadError.connectionFailed("the server did not agree to HTTP/2 (ALPN: \(negotiated ?? "none"))")
                }
                return Connected(channel: channel, speaksHTTP2: http2)
            }
        }
        connected.whenFailure { error in
            // Whatever failed first, no promise of this connect is left pending.
            tunnelReady?.fail(error)
            handshake?.fail(error)
        }
        return connected
    }
}
