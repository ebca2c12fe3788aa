import WebImageSupport

/// How a pool's connections to one origin were used, since the pool was made.
package struct ConnectionCounts: Sendable, Hashable {
    /// Connections opened (TCP, and TLS for https, completed).
    package var opened = 0
    /// Exchanges that got a connection an earlier exchange had used.
    package var reused = 0
    /// Exchanges (requests) that got a connection, new or reused.
    package var requests = 0
    /// HTTP/2 streams opened (one per exchange on an HTTP/2 connection; also counted in ``requests``).
    package var streams = 0

    package init(opened: Int = 0, reused: Int = 0, requests: Int = 0, streams: Int = 0) {
        self.opened = opened
        self.reused = reused
        self.requests = requests
        self.streams = streams
    }
}

/// What a pool did with a connection, as its metrics count it.
package enum ConnectionEvent: String, Sendable {
    /// A connection was opened.
    case opened
    /// A request went out on a connection that served before.
    case reused
    /// A request got a connection.
    case request
    /// A request got a stream of an HTTP/2 connection.
    case stream
}

/// Told every ``ConnectionEvent`` with its origin (`scheme://host[:port]`), on the thread it happened on.
package typealias ConnectionEventObserver = @Sendable (_ origin: String, _ event: ConnectionEvent) -> Void

/// The per-origin counters of one connection pool, keyed by origin (`scheme://host[:port]`).
/// Bounded: past ``maximumOrigins`` origins, new ones are counted together under
/// ``otherOrigins``, so a process fetching from ever-new (hostile) hosts keeps a bounded table and
/// hands its metrics backend a bounded set of `origin` labels.
final class ConnectionMetrics: Sendable {
    typealias Event = ConnectionEvent

    /// How many origins are counted one by one.
    static let maximumOrigins = 256
    /// The key the origins past ``maximumOrigins`` are counted under.
    static let otherOrigins = "other"

    private let counts = Locked([String: ConnectionCounts]())
    private let observer: ConnectionEventObserver?

    init(observer: ConnectionEventObserver? = nil) {
        self.observer = observer
    }

    func record(_ event: Event, for origin: HTTPOrigin) {
        let origin = "\(origin.scheme)://\(origin.hostHeader)"
        let key = counts.withLock { counts -> String in
            let key = counts[origin] != nil || counts.count < Self.maximumOrigins ? origin : Self.otherOrigins
            switch event {
            case .opened: counts[key, default: ConnectionCounts()].opened += 1
            case .reused: counts[key, default: ConnectionCounts()].reused += 1
            case .request: counts[key, default: ConnectionCounts()].requests += 1
            case .stream: counts[key, default: ConnectionCounts()].streams += 1
            }
            return key
        }
        observer?(key, event)
    }

    /// The counts so far, by `scheme://host[:port]` (the port only when not the scheme's default),
    /// and ``otherOrigins`` for those past ``maximumOrigins``.
    func snapshot() -> [String: ConnectionCounts] {
        counts.withLock { $0 }
    }
}
