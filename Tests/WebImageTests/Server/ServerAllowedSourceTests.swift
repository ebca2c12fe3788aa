#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--allowed-source PREFIX`: the prefix rules against hostile URLs, and over real HTTP a source
/// and a redirect hop off the list refused before any connection, the private-address guard
/// still applying to what is on it.
@Suite("webimage serve: allowed sources")
struct ServerAllowedSourceTests {
    private func allowed(_ prefixes: [String], _ url: String) throws -> Bool {
        let list = try SourceAllowList(prefixes)
        // A URL that does not parse is never fetched (400): as good as refused here.
        guard let parsed = URL(string: url) else { return false }
        return list.refusal(for: parsed) == nil
    }

    @Test func prefixesMatchTheParsedURLNotItsText() throws {
        let plain = ["https://cdn.example.com/"]
        #expect(try allowed(plain, "https://cdn.example.com/a.jpg"))
        #expect(try allowed(plain, "HTTPS://CDN.Example.COM/a.jpg"))
        #expect(try allowed(plain, "https://cdn.example.com:443/a.jpg"))
        #expect(try allowed(plain, "https://cdn.example.com./a.jpg"))
        for hostile in ["https://cdn.example.com@evil.com/a.jpg", "https://cdn.example.com:443@evil.com/a.jpg",
                        "https://user@cdn.example.com/a.jpg", "https://cdn.example.com.evil.com/a.jpg",
                        "https://evil.com/cdn.example.com/a.jpg", "https://evil.com/?https://cdn.example.com/",
                        "http://cdn.example.com/a.jpg", "https://cdn.example.com:8443/a.jpg",
                        "https://xcdn.example.com/a.jpg", "https://%63dn.example.com/a.jpg"] {
            #expect(try !allowed(plain, hostile), "\(hostile)")
        }
        // Without a path the host is still compared whole: no string-prefix match on the name.
        let bare = ["https://cdn.example.com"]
        #expect(try allowed(bare, "https://cdn.example.com/a.jpg"))
        #expect(try allowed(bare, "https://cdn.example.com"))
        #expect(try !allowed(bare, "https://cdn.example.com.evil.com/a.jpg"))
        #expect(try !allowed(bare, "https://cdn.example.community/a.jpg"))
    }

    @Test func aStarIsOneLabel() throws {
        let wildcard = ["https://*.cdn.example.com/"]
        #expect(try allowed(wildcard, "https://a.cdn.example.com/x.png"))
        #expect(try allowed(wildcard, "https://eu-west-1.cdn.example.com/x.png"))
        #expect(try !allowed(wildcard, "https://cdn.example.com/x.png"))
        #expect(try !allowed(wildcard, "https://a.b.cdn.example.com/x.png"))
        #expect(try !allowed(wildcard, "https://.cdn.example.com/x.png"))
        #expect(try !allowed(wildcard, "https://a.cdn.example.com.evil.com/x.png"))
        #expect(try !allowed(wildcard, "https://evil.com/.cdn.example.com/x.png"))
        #expect(try allowed(["https://img-*.example.com/"], "https://img-7.example.com/x"))
        #expect(try !allowed(["https://img-*.example.com/"], "https://img-.example.com/x"))
    }

    @Test func wildcardMatchingTakesTimeLinearInTheHostNotExponentialInTheStars() throws {
        // Nine stars against a host that fails only at its end: the former matcher tried every
        // way to share 40 dashes among the stars (these 20 checks took 230 s in a debug build);
        // a one-pass walk takes microseconds.
        let list = try SourceAllowList(["http://*-*-*-*-*-*-*-*-*.example.com/"])
        let hostile = try #require(URL(string: "http://" + String(repeating: "-", count: 40) + ".example.co/a.png"))
        let started = ContinuousClock.now
        for _ in 0..<20 { #expect(list.refusal(for: hostile) != nil) }
        #expect(ContinuousClock.now - started < .milliseconds(500))
        // Still a star per label, one or more bytes, as before.
        #expect(try allowed(["http://*-*-*.example.com/"], "http://a-b-c.example.com/x"))
        #expect(try allowed(["http://*-*-*.example.com/"], "http://a-b-c-d.example.com/x"))
        #expect(try !allowed(["http://*-*-*.example.com/"], "http://a--c.example.com/x"))
        #expect(try allowed(["http://img*x.example.com/"], "http://imgxx.example.com/x"))
        #expect(try !allowed(["http://img*x.example.com/"], "http://imgx.example.com/x"))
        #expect(try allowed(["http://*.*.example.com/"], "http://a.b.example.com/x"))
        #expect(try !allowed(["http://*.*.example.com/"], "http://a.example.com/x"))
        #expect(try !allowed(["http://*.example.com/"], "http://a.example.com.evil/x"))
    }

    @Test func hostsPastDNSLimitsAreRefusedBeforeMatching() throws {
        // Every label under 63 bytes, 256 in all: matched by the pattern, refused for its length.
        let label = String(repeating: "a", count: 60)
        let long = "http://\(label).\(label).\(label).\(label).example.com/x.png"
        #expect(try !allowed(["http://*.*.*.*.example.com/"], long))
        let within = "http://\(label).\(label).\(label).\(label.prefix(57)).example.com/x.png"
        #expect(try allowed(["http://*.*.*.*.example.com/"], within))
        // One label of 64 bytes.
        #expect(try !allowed(["http://*.example.com/"], "http://\(String(repeating: "b", count: 64)).example.com/x.png"))
        #expect(try allowed(["http://*.example.com/"], "http://\(String(repeating: "b", count: 63)).example.com/x.png"))
        let refusal = try SourceAllowList(["http://*.example.com/"])
            .refusal(for: try #require(URL(string: "http://\(String(repeating: "b", count: 64)).example.com/x.png")))
        #expect(refusal?.contains("63") == true)
    }

    @Test func pathsArePrefixesAndDotSegmentsAreRefused() throws {
        let folder = ["https://cdn.example.com/public/"]
        #expect(try allowed(folder, "https://cdn.example.com/public/a.jpg"))
        #expect(try !allowed(folder, "https://cdn.example.com/private/a.jpg"))
        #expect(try !allowed(folder, "https://cdn.example.com/public"))
        for hostile in ["https://cdn.example.com/public/../private/a.jpg", "https://cdn.example.com/public/%2e%2e/private/a.jpg",
                        "https://cdn.example.com/public/%2E%2e/private/a.jpg", "https://cdn.example.com/public/.%2E/private/a.jpg",
                        "https://cdn.example.com/public/..%2fprivate/a.jpg", "https://cdn.example.com/public/%2e%2e%2fprivate/a.jpg",
                        "https://cdn.example.com/public/..%5Cprivate/a.jpg", "https://cdn.example.com/public/./a.jpg"] {
            #expect(try !allowed(folder, hostile), "\(hostile)")
        }
        // The literal prefix, as imgproxy's: without the final slash it is a string prefix of the path.
        #expect(try allowed(["https://cdn.example.com/public"], "https://cdn.example.com/public-too/a.jpg"))
    }

    @Test func portsSchemesAndMalformedPrefixes() throws {
        #expect(try allowed(["http://127.0.0.1:8081/"], "http://127.0.0.1:8081/a"))
        #expect(try !allowed(["http://127.0.0.1:8081/"], "http://127.0.0.1:8082/a"))
        #expect(try !allowed(["http://127.0.0.1:8081/"], "http://127.0.0.1/a"))
        #expect(try allowed(["http://[::1]:9000/"], "http://[::1]:9000/a"))
        #expect(try allowed(["s3://photos/"], "s3://photos/a.jpg"))
        #expect(try !allowed(["s3://photos/"], "s3://photos-private/a.jpg"))
        #expect(try allowed(["local:///"], "local:///a/b.jpg"))
        #expect(try !allowed(["local:///"], "https://cdn.example.com/a.jpg"))
        // An empty list restricts nothing.
        #expect(try allowed([], "https://anything.example/a.jpg"))
        for bad in ["cdn.example.com", "https://user@cdn.example.com/", "https://cdn.example.com:99999/", "https://**.example.com/",
                    "https:///path", "https://cdn.example.com/?q=1", "1http://x/", "https://cdn example.com/"] {
            #expect(throws: ServiceError.self, "\(bad)") { try SourceAllowList([bad]) }
        }
    }

    @Test func sourcesAndRedirectHopsOffTheListAre403BeforeAnyConnection() async throws {
        let server = try await ServerHarness.start { configuration, origin in
            configuration.allowedSourcePrefixes = ["http://127.0.0.1:\(origin.port)/public/"]
        }
        let origin = server.origin
        origin.route("/public/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        origin.route("/private/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        origin.route("/public/to-private", .redirect(to: "/private/photo.jpg"))
        origin.route("/public/to-public", .redirect(to: "/public/photo.jpg"))
        #expect(try await server.get("url=" + server.source("/public/photo.jpg")).status == 200)
        for path in ["/private/photo.jpg", "/public/../private/photo.jpg", "/public/%2e%2e/private/photo.jpg",
                     "/public/..%2fprivate/photo.jpg"] {
            let reply = try await server.get("url=" + server.encode("http://127.0.0.1:\(origin.port)" + path))
            #expect(reply.status == 403, "\(path)")
            #expect(reply.errorCode == "sourceNotAllowed", "\(path)")
        }
        for trick in ["http://127.0.0.1:\(origin.port)@localhost:\(origin.port)/public/photo.jpg",
                      "http://evil@127.0.0.1:\(origin.port)/public/photo.jpg"] {
            let reply = try await server.get("url=" + server.encode(trick))
            #expect(reply.status == 403 && reply.errorCode == "sourceNotAllowed", "\(trick)")
        }
        // A hop off the list: refused by the redirect policy, the hop never requested.
        let hop = try await server.get("url=" + server.source("/public/to-private"))
        #expect(hop.status == 403 && hop.errorCode == "sourceNotAllowed")
        #expect(try await server.get("url=" + server.source("/public/to-public")).status == 200)
        #expect(origin.requestCount(for: "/private/photo.jpg") == 0)
        try await server.stop()
    }

    @Test func theListDoesNotLiftThePrivateAddressGuard() async throws {
        // Listed, but not exempt from the private-address guard: still refused, by name and by literal.
        let server = try await ServerHarness.start { configuration, origin in
            configuration.privateSourceHosts = []
            configuration.allowedSourcePrefixes = ["http://localhost:\(origin.port)/", "http://127.0.0.1:\(origin.port)/"]
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        for host in ["localhost", "127.0.0.1"] {
            let reply = try await server.get("url=" + server.encode("http://\(host):\(server.origin.port)/photo.jpg"))
            #expect(reply.status == 403 && reply.errorCode == "sourceNotAllowed", "\(host)")
        }
        // What `localhost` resolved to is logged, never told: a fixed reason.
        let named = try await server.get("url=" + server.encode("http://localhost:\(server.origin.port)/photo.jpg"))
        let message = try #require(named.errorMessage)
        #expect(!message.contains("127.0.0.1") && !message.contains("::1") && !message.contains("resolves"), "\(message)")
        #expect(server.origin.totalRequestCount == 0)
        try await server.stop()
    }
}
