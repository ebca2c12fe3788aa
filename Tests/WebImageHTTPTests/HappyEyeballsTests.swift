import Foundation
import NIOCore
import Testing
import WebImageHTTP
import WebImageSupport
import WebImageTestSupport

/// A name with an IPv6 and an IPv4 address, the IPv6 one first and refusing (nothing listens on
/// ::1 at the server's port): the connection must still be made, over IPv4, whether the pool
/// resolves the name itself (to ask a connect-address policy) or lets NIO do it.
@Suite("Happy Eyeballs", .timeLimit(.minutes(1)))
struct HappyEyeballsTests {
    /// Resolves every name to ::1 then 127.0.0.1 at `port`, as a dual-stack host's DNS would.
    static func dualStack(_ port: Int) -> NameResolver {
        { _, _ in [try SocketAddress(ipAddress: "::1", port: port), try SocketAddress(ipAddress: "127.0.0.1", port: port)] }
    }

    @Test(arguments: [false, true])
    func aDualStackNameWhoseIPv6AddressFailsConnectsOverIPv4(withAddressPolicy: Bool) async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            let port = server.baseURL.port ?? 0
            var configuration = HTTPSession.Configuration.testing()
            configuration.nameResolver = Self.dualStack(port)
            let asked = Locked<[String]>([])
            if withAddressPolicy {
                configuration.addressPolicy = { _, _, address in
                    asked.withLock { $0.append(address.ipAddress ?? "?") }
                    return true
                }
            }
            let url = try #require(URL(string: "http://dual-stack.test:\(port)/a"))
            let start = ContinuousClock.now
            try await withSession(configuration) { session in
                let outcome = await session.load(HTTPLoadRequest(url: url))
                #expect(outcome.data?.count == 100, "\(String(describing: outcome.error))")
            }
            #expect(ContinuousClock.now - start < .seconds(3))
            if withAddressPolicy { #expect(Set(asked.withLock { $0 }) == ["::1", "127.0.0.1"]) }
            #expect(server.requests.first?.headers["host"] == "dual-stack.test:\(port)")
        }
    }

    @Test func aPolicyRefusingEitherAddressRefusesTheName() async throws {
        try await withServer { server in
            server.route("/a", .image(testBytes(100), contentType: "image/png"))
            let port = server.baseURL.port ?? 0
            var configuration = HTTPSession.Configuration.testing()
            configuration.nameResolver = Self.dualStack(port)
            configuration.addressPolicy = { _, _, address in address.protocol == .inet6 }
            let url = try #require(URL(string: "http://dual-stack.test:\(port)/a"))
            try await withSession(configuration) { session in
                let outcome = await session.load(HTTPLoadRequest(url: url))
                guard case .rejected? = outcome.error else {
                    Issue.record("expected rejected, got \(String(describing: outcome.error))")
                    return
                }
            }
            #expect(server.totalRequestCount == 0)
        }
    }
}
