import Metrics
import WebImageHTTP

extension ImageDownloader {
    /// How the HTTP connections to one origin were used (``ImageDownloader/connectionMetrics()``):
    /// the HTTP stack's counts (see ``/WebImageHTTP/ConnectionCounts``).
    @available(*, deprecated, renamed: "ConnectionCounts")
    public typealias ConnectionMetrics = ConnectionCounts
}

extension ConnectionCounts {
    /// Counts `event` in swift-metrics: `webimage_http_connections_opened`,
    /// `webimage_http_connections_reused`, `webimage_http_requests` and `webimage_http_streams_opened`,
    /// with the origin as a dimension.
    static let export: ConnectionEventObserver = { origin, event in
        let label = switch event {
        case .opened: "webimage_http_connections_opened"
        case .reused: "webimage_http_connections_reused"
        case .request: "webimage_http_requests"
        case .stream: "webimage_http_streams_opened"
        }
        Counter(label: label, dimensions: [("origin", origin)]).increment()
    }
}
