import Metrics

/// The swift-metrics instruments of the downloader (labels start with `webimage_downloader_`).
struct DownloadMetrics: Sendable {
    let requests = Counter(label: "webimage_downloader_requests")
    let bytes = Counter(label: "webimage_downloader_bytes")
    let coalescedJoins = Counter(label: "webimage_downloader_coalesced_joins")
    let cancellations = Counter(label: "webimage_downloader_cancellations")
    let duration = Timer(label: "webimage_downloader_duration")

    /// Counts a failure, with its kind (the error's ``WebImageError/code``) as a dimension.
    func failure(_ error: WebImageError) {
        Counter(label: "webimage_downloader_failures", dimensions: [("kind", error.code)]).increment()
    }
}
