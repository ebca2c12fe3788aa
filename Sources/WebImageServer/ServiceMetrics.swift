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

    /// `webimage_NAME_UNIT`, with help text.
    private static func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "webimage", metricName: name, unitName: unit, helpText: help)
    }

    init() {
        latency = registry.makeDurationHistogram(
            descriptor: Self.descriptor("http_request_duration", "seconds", "Time from request to response head, all endpoints."),
            buckets: [.milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                      .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10)])
        sourceFetches = registry.makeCounter(descriptor: Self.descriptor("source_fetches", "total", "Source images fetched from origins."))
        sourceFailures = registry.makeCounter(descriptor: Self.descriptor("source_fetch_failures", "total", "Source fetches that failed."))
        bytesOut = registry.makeCounter(descriptor: Self.descriptor("bytes_out", "total", "Image body bytes sent."))
        renders = registry.makeCounter(descriptor: Self.descriptor("renders", "total", "Decode + resize + encode runs."))
        var hits: [OutputCache.Tier: Counter] = [:]
        for tier in OutputCache.Tier.allCases {
            hits[tier] = registry.makeCounter(
                descriptor: Self.descriptor("cache_hits", "total", "Image requests served from the output cache."),
                labels: [("tier", tier.rawValue)])
        }
        cacheHits = hits
    }

    func request(status: Int, duration: Duration) {
        let counter = statusCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = registry.makeCounter(
                descriptor: Self.descriptor("http_requests", "total", "HTTP requests by response status."),
                labels: [("status", String(status))])
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
