#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Decides whether a connection may be opened to `address`, which `host` (the URL's host,
/// lowercased) resolved to, for `port`. Return `false` to refuse: the load fails with
/// a rejection before any connection is made.
///
/// With a policy set, the loader resolves the name itself, asks the policy about every address,
/// and connects to an address it approved: the address checked is the address connected to, so
/// a name that resolves to a public address for a check and to a private one for the connect
/// (DNS rebinding) cannot get through. IP literals are asked about as they are. It runs for every
/// new connection (the first URL and every redirect hop); a pooled connection was checked when opened.
public typealias ConnectAddressPolicy = @Sendable (_ host: String, _ port: Int, _ address: SocketAddress) -> Bool

/// Name resolution for a ``ConnectAddressPolicy``: getaddrinfo (or a ``NameResolver``) on NIO's
/// blocking-work thread pool.
enum PolicyResolver {
    /// Resolves `host`, checks every address with `policy`, and gives them all when all pass (to
    /// be raced, see ``ResolvedAddresses``). A name with any refused address is refused whole: it
    /// names a place the guard forbids.
    static func resolve(_ host: String, port: Int, on loop: any EventLoop, policy: @escaping ConnectAddressPolicy,
                        resolver: NameResolver? = nil) -> EventLoopFuture<[SocketAddress]> {
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            return check([literal], host: host, port: port, policy: policy, on: loop)
        }
        return lookUp(host, port: port, on: loop, resolver: resolver).flatMap { addresses in
            check(addresses, host: host, port: port, policy: policy, on: loop)
        }
    }

    private static func check(_ addresses: [SocketAddress], host: String, port: Int,
                              policy: ConnectAddressPolicy, on loop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        guard !addresses.isEmpty else {
            return loop.makeFailedFuture(HTTPLoadError.connectionFailed("\(host) has no address"))
        }
        if let refused = addresses.first(where: { !policy(host, port, $0) }) {
            return loop.makeFailedFuture(HTTPLoadError.rejected(
                "\(host) resolves to \(refused.ipAddress ?? "an address") the address policy refuses"))
        }
        return loop.makeSucceededFuture(addresses)
    }

    /// `host`'s addresses from `resolver`, else getaddrinfo, off the event loop.
    static func lookUp(_ host: String, port: Int, on loop: any EventLoop, resolver: NameResolver?) -> EventLoopFuture<[SocketAddress]> {
        NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
            try resolver?(host, port) ?? addresses(of: host, port: port)
        }
    }

    /// getaddrinfo's TCP addresses for `host`, in its order.
    private static func addresses(of host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw HTTPLoadError.connectionFailed("cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var result: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let entry = next {
            if let raw = entry.pointee.ai_addr {
                switch entry.pointee.ai_family {
                case AF_INET:
                    let address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                    result.append(SocketAddress(address, host: host))
                case AF_INET6:
                    let address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    result.append(SocketAddress(address, host: host))
                default:
                    break
                }
            }
            next = entry.pointee.ai_next
        }
        return result
    }
}
