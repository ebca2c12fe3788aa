#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// The source cache: each source is fetched at most once per instance, whatever variants of it are
/// asked for, one after another or at once; kept in memory and, with a cache directory, on disk,
/// with the validators the outputs' ETag is made from. The loopback origin counts the fetches.
@Suite("webimage serve: source cache")
struct ServerSourceCacheTests {
    private static let etag = "\"photo-v1\""

    private func variant(_ server: ServerHarness, _ path: String, _ options: String) -> String {
        "url=" + server.source(path) + "&format=jpeg" + options
    }

    @Test func newVariantsOfAKeptSourceAreNotFetchedAgainFromMemoryOrDisk() async throws {
        let origin = try await LoopbackServer.start()
        var photo = LoopbackResponse.image(ServerTestImages.photo, contentType: "image/jpeg")
        photo.etag = Self.etag
        origin.route("/photo.jpg", photo)
        let directory = try TemporaryDirectory()

        // First instance: one fetch, then new sizes and fits from the kept source (memory).
        let first = try await ServerHarness.start(origin: origin) { configuration, _ in configuration.cacheDirectory = directory.url.path }
        var etags: [String: String] = [:]
        for options in ["&w=100", "&w=120", "&h=90&fit=cover", "&w=64&h=64&fit=fill"] {
            let reply = try await first.get(variant(first, "/photo.jpg", options))
            #expect(reply.status == 200, "\(options)")
            etags[options] = reply.header("ETag")
            #expect(origin.requestCount(for: "/photo.jpg") == 1, "\(options): \(origin.requestCount(for: "/photo.jpg")) fetches")
        }
        try await first.stop()

        // Second instance on the same cache directory: a new size comes from the source on disk.
        let second = try await ServerHarness.start(origin: origin) { configuration, _ in configuration.cacheDirectory = directory.url.path }
        let fromDisk = try await second.get(variant(second, "/photo.jpg", "&w=140"))
        #expect(fromDisk.status == 200)
        #expect(origin.requestCount(for: "/photo.jpg") == 1, "the source kept on disk was fetched again")
        try await second.stop()

        // A memory-only instance fetches it once: the ETags it makes from a fresh fetch are the ones
        // made from the kept copies (memory and disk), so the source's validators were kept with its bytes.
        let third = try await ServerHarness.start(origin: origin)
        let fresh = try await third.get(variant(third, "/photo.jpg", "&w=140"))
        #expect(fresh.header("ETag") != nil && fresh.header("ETag") == fromDisk.header("ETag"))
        let again = try await third.get(variant(third, "/photo.jpg", "&w=120"))
        #expect(again.header("ETag") == etags["&w=120"])
        #expect(origin.requestCount(for: "/photo.jpg") == 2)
        try await third.stop()
        try await origin.shutdown()
    }

    @Test func aSourceGoesToDiskOnItsSecondUseNotItsFirst() async throws {
        let origin = try await LoopbackServer.start()
        origin.route("/once.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let directory = try TemporaryDirectory()
        func instance() async throws -> ServerHarness {
            try await ServerHarness.start(origin: origin) { configuration, _ in configuration.cacheDirectory = directory.url.path }
        }
        // One variant: the source stays in memory only (writing every source cost a quarter of
        // the renders per second on distinct sources), so the next instance fetches it again.
        let first = try await instance()
        #expect(try await first.get(variant(first, "/once.jpg", "&w=100")).status == 200)
        try await first.stop()
        let second = try await instance()
        #expect(try await second.get(variant(second, "/once.jpg", "&w=120")).status == 200)
        #expect(origin.requestCount(for: "/once.jpg") == 2, "a source used once was written to disk")
        // A second variant in the same instance is its second use: now it is written.
        #expect(try await second.get(variant(second, "/once.jpg", "&w=140")).status == 200)
        #expect(origin.requestCount(for: "/once.jpg") == 2)
        try await second.stop()
        let third = try await instance()
        #expect(try await third.get(variant(third, "/once.jpg", "&w=160")).status == 200)
        #expect(origin.requestCount(for: "/once.jpg") == 2, "a source used twice was not kept on disk")
        try await third.stop()
        try await origin.shutdown()
    }

    @Test func concurrentVariantsOfOneSourceShareOneFetch() async throws {
        let server = try await ServerHarness.start()
        let gate = LoopbackGate()
        var held = LoopbackResponse.image(ServerTestImages.photo, contentType: "image/jpeg")
        held.gate = gate
        server.origin.route("/held.jpg", held)
        let widths = [80, 96, 112, 128, 144, 160]
        try await withThrowingTaskGroup(of: Int.self) { group in
            for width in widths {
                group.addTask { try await server.get(variant(server, "/held.jpg", "&w=\(width)")).status }
            }
            // The first request reached the origin; the others join it or arrive after it ended.
            await server.origin.waitForRequests(1, path: "/held.jpg")
            gate.open()
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.origin.requestCount(for: "/held.jpg") == 1)
        // And later sizes still need no fetch.
        #expect(try await server.get(variant(server, "/held.jpg", "&w=200")).status == 200)
        #expect(server.origin.requestCount(for: "/held.jpg") == 1)
        try await server.stop()
    }

    @Test func aSourceServedWithNoStoreIsNotKept() async throws {
        let server = try await ServerHarness.start()
        var uncacheable = LoopbackResponse.image(ServerTestImages.photo, contentType: "image/jpeg")
        uncacheable.headers["Cache-Control"] = "private, No-Store"
        server.origin.route("/private.jpg", uncacheable)
        #expect(try await server.get(variant(server, "/private.jpg", "&w=100")).status == 200)
        #expect(try await server.get(variant(server, "/private.jpg", "&w=120")).status == 200)
        #expect(server.origin.requestCount(for: "/private.jpg") == 2)
        try await server.stop()
    }
}
