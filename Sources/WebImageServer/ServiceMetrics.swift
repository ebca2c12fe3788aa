import Metrics
import Prometheus
import WebImage

/// The service's instruments, made with swift-metrics through the factory it is given: the
/// application's (``WebImageService`` embedded), or the standalone server's Prometheus registry
/// (`GET /metrics`), which `webimage serve` also bootstraps as the process's factory so the
/// library's own instruments (`webimage_downloader_*`) land beside these.
final class ServiceMetrics: Sendable {
    private let factory: any MetricsFactory
    private let latency: Metrics.Timer
    private let sourceFetches: Metrics.Counter
    private let sourceFailures: Metrics.Counter
    private let bytesOut: Metrics.Counter
    private let renders: Metrics.Counter
    private let renderTimeouts: Metrics.Counter
    private let statusCounters = Locked([Int: Metrics.Counter]())
    private let cacheHits: [CacheTier: Metrics.Counter]

    /// The request latency's name; its buckets are set on the standalone server's factory.
    static let latencyLabel = "webimage_http_request_duration_seconds"
    /// The latency buckets, 5 ms to 10 s.
    static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    init(factory: any MetricsFactory) {
        self.factory = factory
        latency = Metrics.Timer(label: Self.latencyLabel, dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
        sourceFetches = Metrics.Counter(label: "webimage_source_fetches_total", dimensions: [], factory: factory)
        sourceFailures = Metrics.Counter(label: "webimage_source_fetch_failures_total", dimensions: [], factory: factory)
        bytesOut = Metrics.Counter(label: "webimage_bytes_out_total", dimensions: [], factory: factory)
        renders = Metrics.Counter(label: "webimage_renders_total", dimensions: [], factory: factory)
        renderTimeouts = Metrics.Counter(label: "webimage_render_timeouts_total", dimensions: [], factory: factory)
        var hits: [CacheTier: Metrics.Counter] = [:]
        for tier in CacheTier.allCases {
            hits[tier] = Metrics.Counter(label: "webimage_cache_hits_total", dimensions: [("tier", tier.rawValue)], factory: factory)
        }
        cacheHits = hits
    }

    /// A Prometheus factory over `registry` with the service's latency buckets.
    static func prometheusFactory(_ registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[latencyLabel] = latencyBuckets
        return factory
    }

    func request(status: Int, duration: Duration) {
        let counter = statusCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = Metrics.Counter(label: "webimage_http_requests_total", dimensions: [("status", String(status))], factory: factory)
            counters[status] = counter
            return counter
        }
        counter.increment()
        latency.record(duration: duration)
    }

    func sourceFetched(failed: Bool) {
        sourceFetches.increment()
        if failed { sourceFailures.increment() }
    }

    func rendered() { renders.increment() }
    func renderTimedOut() { renderTimeouts.increment() }
    func cacheHit(_ tier: CacheTier) { cacheHits[tier]?.increment() }
    func sent(bytes: Int) { bytesOut.increment(by: Int64(bytes)) }
}

/// Where a cache hit came from, as `/metrics` counts it (`store`: the fleet's ``ResultStore``).
enum CacheTier: String, Sendable, CaseIterable { case memory, disk, store }
