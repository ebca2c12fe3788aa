import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// deploy/nginx.conf, as shipped, in front of two real `webimage serve` instances and a loopback
/// origin that counts every source request. Alone it takes about 3 s; the limit is for a run
/// beside the decoder suites on two busy cores, where it measured 73 s.
@Suite("nginx fleet (deploy/nginx.conf)",
       .enabled(if: NginxFleet.isAvailable, "nginx is not installed (scripts/install-deps.sh installs it)"),
       .enabled(if: ServeInstance.isAvailable, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(5)))
struct FleetTests {
    /// An instance's image work so far: anything that answered `/image` with a body moves it.
    private static func imageWork(_ metrics: PrometheusText) -> Double {
        metrics.sum("webimage_renders_total") + metrics.sum("webimage_cache_hits_total") + metrics.sum("webimage_bytes_out_total")
    }

    @Test func repeatsAreProxyHitsAKilledInstanceIsRoutedAroundAndSourcesAreFetchedOncePerInstance() async throws {
        let origin = try await LoopbackServer.start()
        let sources = (0..<8).map { "/source-\($0).jpg" }
        for (seed, path) in sources.enumerated() {
            origin.route(path, .image(try SampleImages.encoded(.jpeg, width: 480, height: 360, seed: seed), contentType: "image/jpeg"))
        }
        let cacheA = try TemporaryDirectory(), cacheB = try TemporaryDirectory()
        let allow = ["--allow-source", "127.0.0.1:\(origin.port)"]
        let a = try await ServeInstance.start(allow + ["--cache-dir", cacheA.url.path])
        let b = try await ServeInstance.start(allow + ["--cache-dir", cacheB.url.path])
        let fleet = try await NginxFleet.start(instances: [a.port, b.port])
        func imageURL(_ source: String, width: Int) -> String {
            let sourceURL = origin.url(source).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            return "/image?url=\(sourceURL)&w=\(width)&h=\(width)&fit=cover&format=jpeg"
        }
        func fetch(_ target: String) async throws -> HTTPReply { try await ServerTestClient.send(port: fleet.port, target) }

        // Every source at two sizes: 16 distinct URIs, each a miss that one instance renders.
        var firstBodies: [String: Data] = [:]
        for source in sources {
            for width in [120, 160] {
                let url = imageURL(source, width: width)
                let response = try await fetch(url)
                #expect(response.status == 200, "\(url): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
                #expect(response.header("X-Cache-Status") == "MISS")
                #expect(response.header("Content-Type") == "image/jpeg")
                #expect(response.body.starts(with: [0xFF, 0xD8, 0xFF]))
                firstBodies[url] = response.body
            }
        }
        let originAfterFirst = origin.totalRequestCount
        let metricsA = try await a.metrics(), workB = Self.imageWork(try await b.metrics())

        // The same URIs again: all answered by nginx's cache; no instance does any image work.
        for (url, body) in firstBodies {
            let response = try await fetch(url)
            #expect(response.status == 200 && response.header("X-Cache-Status") == "HIT", "\(url): \(response.status) \(response.header("X-Cache-Status") ?? "-")")
            #expect(response.body == body)
        }
        #expect(Self.imageWork(try await a.metrics()) == Self.imageWork(metricsA))
        #expect(Self.imageWork(try await b.metrics()) == workB)
        #expect(origin.totalRequestCount == originAfterFirst)

        // One instance dies: new sizes still succeed (nginx moves its keys to the other one), and
        // what nginx already cached stays a hit.
        let fetchesA = metricsA.sum("webimage_source_fetches_total")
        await a.kill()
        for source in sources {
            let url = imageURL(source, width: 200)
            let response = try await fetch(url)
            #expect(response.status == 200, "\(url) with one instance down: \(response.status)")
            #expect(response.header("X-Cache-Status") == "MISS")
        }
        for url in firstBodies.keys.sorted().prefix(4) {
            let response = try await fetch(url)
            #expect(response.status == 200 && response.header("X-Cache-Status") == "HIT")
        }
        let fetchesB = try await b.metrics().sum("webimage_source_fetches_total")
        await fleet.stop()
        await b.stop()

        // Who answered each miss, from nginx's access log (complete: nginx has exited).
        let misses = try fleet.accessLog().filter { $0.uri.hasPrefix("/image") && $0.cache == "MISS" }
        #expect(misses.count == 24, "\(misses.map(\.uri))\n\(fleet.errorLog())")
        let servedA = misses.filter { $0.upstreamPort == a.port }, servedB = misses.filter { $0.upstreamPort == b.port }
        #expect(servedA.count + servedB.count == misses.count)
        #expect(!servedA.isEmpty && !servedB.isEmpty, "the ring sent every key to one instance")
        #expect(servedA.allSatisfy { !$0.uri.contains("w=200") }, "an instance answered after it was killed")
        // Each source was fetched at most once by each instance that rendered any of its sizes: an
        // instance keeps the sources it fetched (source cache), so a new size is rendered without a fetch.
        for source in sources {
            let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
            let renderers = Set(misses.filter { $0.uri.contains(encoded) }.compactMap(\.upstreamPort))
            #expect(origin.requestCount(for: source) <= renderers.count,
                    "\(source): \(origin.requestCount(for: source)) origin requests for \(renderers.count) instances")
        }
        #expect(Double(origin.totalRequestCount) == fetchesA + fetchesB)
        try await origin.shutdown()
    }

    /// deploy/README's shared result store: what one instance rendered, the other answers from
    /// `--result-store` (moto's S3 server) after the first is gone, without fetching the source or rendering.
    @Test(.enabled(if: MotoS3.available, "python3 with moto[server] and boto3 is not installed"))
    func anInstanceAnswersFromTheSharedResultStoreWhatAnotherRendered() async throws {
        let moto = try await MotoS3.start()
        try await moto.put(bucket: "results", [:])
        let origin = try await LoopbackServer.start()
        origin.route("/shared.jpg", .image(try SampleImages.encoded(.jpeg, width: 480, height: 360, seed: 7), contentType: "image/jpeg"))
        let arguments = ["--allow-private-source", "127.0.0.1:\(origin.port)",
                         "--s3-endpoint", moto.endpoint, "--result-store", "s3://results/fleet"]
        let credentials = ["AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"]
        let a = try await ServeInstance.start(arguments, environment: credentials)
        let b = try await ServeInstance.start(arguments, environment: credentials)
        let fleet = try await NginxFleet.start(instances: [a.port, b.port])
        let source = origin.url("/shared.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""

        let first = try await ServerTestClient.send(port: fleet.port, "/image?url=\(source)&w=150&h=150&fit=cover&format=jpeg")
        #expect(first.status == 200 && first.header("X-Cache-Status") == "MISS")
        let rendersA = try await a.metrics().sum("webimage_renders_total")
        let rendersB = try await b.metrics().sum("webimage_renders_total")
        try #require(rendersA + rendersB == 1, "renders: \(rendersA) + \(rendersB)")
        let (renderer, other) = rendersA == 1 ? (a, b) : (b, a)
        // SIGTERM: the instance finishes its write to the store, then exits; nginx routes around it.
        await renderer.stop()
        #expect(try await moto.keys(bucket: "results", prefix: "fleet/").count == 1)

        // The same output under a URI nginx has not cached (the parameters in another order).
        let second = try await ServerTestClient.send(port: fleet.port, "/image?format=jpeg&fit=cover&h=150&w=150&url=\(source)")
        #expect(second.status == 200 && second.header("X-Cache-Status") == "MISS")
        #expect(second.body == first.body)
        let metrics = try await other.metrics()
        #expect(metrics.sum("webimage_renders_total") == 0, "the other instance rendered")
        #expect(metrics.sum("webimage_source_fetches_total") == 0, "the other instance fetched the source")
        #expect(metrics.sum("webimage_cache_hits_total", matching: ["tier": "store"]) == 1)
        #expect(origin.requestCount(for: "/shared.jpg") == 1)
        await fleet.stop()
        await other.stop()
        try await origin.shutdown()
        await moto.stop()
    }
}
