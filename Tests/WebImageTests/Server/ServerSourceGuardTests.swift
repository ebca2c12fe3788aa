#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// The SSRF guard: the address rules, and over real HTTP literal IPs, a name that resolves to
/// 127.0.0.1 and a redirect to it, each refused before any connection to the refused place.
@Suite("webimage serve: SSRF guard")
struct ServerSourceGuardTests {
    private func isPublic(_ ip: String) throws -> Bool {
        SourceGuard.isPublic(try SocketAddress(ipAddress: ip, port: 80))
    }

    @Test func addressRules() throws {
        for ip in ["127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                   "0.0.0.0", "100.64.0.1", "224.0.0.1", "255.255.255.255",
                   "::1", "::", "fe80::1", "febf::1", "fc00::1", "fd12:3456::1", "ff02::1",
                   "::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::a00:1",
                   "2002:7f00:1::1", "2001:db8::1"] {
            #expect(try !isPublic(ip), "\(ip) must be refused")
        }
        for ip in ["8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "100.128.0.1", "2606:4700::1111",
                   "::ffff:8.8.8.8", "2a00:1450::1", "fec0::1".replacingOccurrences(of: "fec0", with: "2400")] {
            #expect(try isPublic(ip), "\(ip) must be allowed")
        }
    }

    @Test func localUseNAT64AndTeredoAreRefused() throws {
        // 64:ff9b:1::/48 (RFC 8215) may carry 10.0.0.1 at any prefix length; Teredo tunnels to IPv4 hosts.
        for ip in ["64:ff9b:1::a00:1", "64:ff9b:1:a00:100::", "64:ff9b:1:ffff::1", "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"] {
            #expect(try !isPublic(ip), "\(ip) must be refused")
        }
        // Next to them, public: the global NAT64 prefix with a public address, other 2001: networks.
        for ip in ["64:ff9b::808:808", "2001:4860:4860::8888", "2001:200::1"] {
            #expect(try isPublic(ip), "\(ip) must be allowed")
        }
    }

    @Test func allowListAndSchemes() throws {
        let strict = try SourceGuard(allowPrivateSources: false, allowedSources: ["images.internal", "127.0.0.1:8081", "[::1]:9000"])
        #expect(strict.refusal(for: URL(string: "http://127.0.0.1:8081/a")!) == nil)
        #expect(strict.refusal(for: URL(string: "http://127.0.0.1:8082/a")!) != nil)
        #expect(strict.refusal(for: URL(string: "http://[::1]:9000/a")!) == nil)
        #expect(strict.refusal(for: URL(string: "http://[::1]:9001/a")!) != nil)
        #expect(strict.refusal(for: URL(string: "ftp://example.com/a")!) != nil)
        #expect(strict.refusal(for: URL(string: "file:///etc/passwd")!) != nil)
        let loopback = try SocketAddress(ipAddress: "127.0.0.1", port: 80)
        #expect(strict.allowsConnection(host: "images.internal", port: 80, address: loopback))
        #expect(!strict.allowsConnection(host: "example.com", port: 80, address: loopback))
        let open = try SourceGuard(allowPrivateSources: true, allowedSources: [])
        #expect(open.refusal(for: URL(string: "http://10.0.0.1/a")!) == nil)
        #expect(open.allowsConnection(host: "x", port: 80, address: loopback))
        #expect(throws: ServiceError.self) { try SourceGuard(allowPrivateSources: false, allowedSources: ["host:notaport"]) }
    }

    @Test func literalPrivateAddressesAre403BeforeAnyConnection() async throws {
        // No allow-list entry: the guard as shipped.
        let server = try await ServerHarness.start { configuration, _ in configuration.allowedSources = [] }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let port = server.origin.port
        for host in ["127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254", "[fe80::1]", "[fc00::1]", "0.0.0.0",
                     "[::ffff:127.0.0.1]", "192.168.0.1"] {
            let reply = try await server.get("url=" + server.encode("http://\(host):\(port)/photo.jpg"))
            #expect(reply.status == 403, "\(host)")
            #expect(reply.errorCode == "sourceNotAllowed", "\(host)")
        }
        let scheme = try await server.get("url=" + server.encode("file:///etc/passwd"))
        #expect(scheme.status == 403 && scheme.errorCode == "sourceNotAllowed")
        #expect(server.origin.totalRequestCount == 0)
        try await server.stop()
    }

    @Test func aNameResolvingToLoopbackIs403() async throws {
        // The origin is allowed as 127.0.0.1:PORT; `localhost` names the same place but is
        // resolved and its address refused at connect time.
        let server = try await ServerHarness.start()
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let reply = try await server.get("url=" + server.encode("http://localhost:\(server.origin.port)/photo.jpg"))
        #expect(reply.status == 403)
        #expect(reply.errorCode == "sourceNotAllowed")
        #expect(server.origin.totalRequestCount == 0)
        // The allowed spelling of the same origin works.
        #expect(try await server.get("url=" + server.source("/photo.jpg")).status == 200)
        try await server.stop()
    }

    @Test func aRedirectToLoopbackIs403() async throws {
        let server = try await ServerHarness.start()
        let port = server.origin.port
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        // The allowed origin stands in for a public host that redirects inward: by name, and by literal.
        server.origin.route("/to-name", .redirect(to: "http://localhost:\(port)/photo.jpg"))
        server.origin.route("/to-literal", .redirect(to: "http://127.0.0.2:\(port)/photo.jpg"))
        server.origin.route("/to-metadata", .redirect(to: "http://169.254.169.254/latest/meta-data/"))
        server.origin.route("/to-file", .redirect(to: "file:///etc/passwd"))
        server.origin.route("/to-allowed", .redirect(to: "/photo.jpg"))
        for path in ["/to-name", "/to-literal", "/to-metadata", "/to-file"] {
            let reply = try await server.get("url=" + server.source(path))
            #expect(reply.status == 403, "\(path)")
            #expect(reply.errorCode == "sourceNotAllowed", "\(path)")
        }
        #expect(server.origin.requestCount(for: "/photo.jpg") == 0)
        // A redirect within the allowed origin is followed.
        #expect(try await server.get("url=" + server.source("/to-allowed")).status == 200)
        #expect(server.origin.requestCount(for: "/photo.jpg") == 1)
        try await server.stop()
    }

    @Test func allowPrivateSourcesAndNamedEntriesLiftTheGuard() async throws {
        let open = try await ServerHarness.start { configuration, _ in
            configuration.allowedSources = []
            configuration.allowPrivateSources = true
        }
        open.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        #expect(try await open.get("url=" + open.encode("http://localhost:\(open.origin.port)/photo.jpg")).status == 200)
        try await open.stop()

        let named = try await ServerHarness.start { configuration, origin in
            configuration.allowedSources = ["localhost:\(origin.port)"]
        }
        named.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        #expect(try await named.get("url=" + named.encode("http://localhost:\(named.origin.port)/photo.jpg")).status == 200)
        // The entry names that host only.
        #expect(try await named.get("url=" + named.source("/photo.jpg")).status == 403)
        try await named.stop()
    }
}
