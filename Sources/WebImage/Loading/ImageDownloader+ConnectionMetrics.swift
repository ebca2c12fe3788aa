import Metrics
import WebImageHTTP

extension ImageDownloader {
    /// How the HTTP connections to one origin were used (``ImageDownloader/connectionMetrics()``).
    public struct ConnectionMetrics: Sendable, Hashable {
        /// Connections opened (TCP, and TLS for https, completed).
        public var connectionsOpened: Int
        /// Requests that went out on a connection an earlier request had used.
        public var connectionsReused: Int
        /// Requests sent (each got a connection, new or reused).
        public var requests: Int
        /// HTTP/2 streams opened: requests that went out as a stream of a shared connection.
        public var streamsOpened: Int

        /// Creates metrics.
        public init(connectionsOpened: Int = 0, connectionsReused: Int = 0, requests: Int = 0, streamsOpened: Int = 0) {
            self.connectionsOpened = connectionsOpened
            self.connectionsReused = connectionsReused
            self.requests = requests
            self.streamsOpened = streamsOpened
        }

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

        init(_ counts: ConnectionCounts) {
            self.init(connectionsOpened: counts.opened, connectionsReused: counts.reused, requests: counts.requests,
                      streamsOpened: counts.streams)
        }
    }
}
