import NIOCore
import NIOPosix

/// Resolves a host name to the addresses to try, in preference order (getaddrinfo's by default).
package typealias NameResolver = @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress]

/// Addresses resolved beforehand, handed to NIO's connector as a `Resolver`, so that a name the
/// loader resolved itself (to ask a ``ConnectAddressPolicy``, or with a ``NameResolver``) is still
/// connected to the way NIO connects to names: Happy Eyeballs (RFC 8305), IPv6 and IPv4 attempts
/// raced with a 250 ms stagger, the first to connect winning. Only these addresses are tried.
final class ResolvedAddresses: Resolver, Sendable {
    private let addresses: [SocketAddress]
    private let loop: any EventLoop

    init(_ addresses: [SocketAddress], on loop: any EventLoop) {
        self.addresses = addresses
        self.loop = loop
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { $0.protocol == .inet })
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { $0.protocol == .inet6 })
    }

    func cancelQueries() {}
}
