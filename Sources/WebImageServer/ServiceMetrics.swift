import Prometheus
import WebImage

/// The service's Prometheus metrics (`GET /metrics`), in a registry of its own so several servers
/// in one process (tests) do not share counters.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let latency: DurationHistogram
    private let sourceFetches: Counter
    private let sourceFailures: Counter
    private let bytesOut: Counter
    private let renders: Counter
    private let statusCounters = Locked([Int: Counter]())
    private let cacheHits: [OutputCache.Tier: Counter]

    init() {
        latency = registry.makeDurationHistogram(
            name: "webimage_http_request_duration_seconds",
            buckets: [.milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                      .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10)],
            help: "Time from request to response head, all endpoints.")
        sourceFetches = registry.makeCounter(name: "webimage_source_fetches_total", help: "Source images fetched from origins.")
        sourceFailures = registry.makeCounter(name: "webimage_source_fetch_failures_total", help: "Source fetches that failed.")
        bytesOut = registry.makeCounter(name: "webimage_bytes_out_total", help: "Image body bytes sent.")
        renders = registry.makeCounter(name: "webimage_renders_total", help: "Decode + resize + encode runs.")
        var hits: [OutputCache.Tier: Counter] = [:]
        for tier in [OutputCache.Tier.memory, .disk] {
            hits[tier] = registry.makeCounter(name: "webimage_cache_hits_total", labels: [("tier", tier.rawValue)],
                                              help: "Image requests served from the output cache.")
        }
        cacheHits = hits
    }

    func request(status: Int, duration: Duration) {
        let counter = statusCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = registry.makeCounter(name: "webimage_http_requests_total", labels: [("status", String(status))],
                                               help: "HTTP requests by response status.")
            counters[status] = counter
            return counter
        }
        counter.increment()
        latency.record(duration)
    }

    func sourceFetched(failed: Bool) {
        sourceFetches.increment()
        if failed { sourceFailures.increment() }
    }

    func rendered() { renders.increment() }
    func cacheHit(_ tier: OutputCache.Tier) { cacheHits[tier]?.increment() }
    func sent(bytes: Int) { bytesOut.increment(by: Int64(bytes)) }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
