import WebImageSupport

/// How a pool's connections to one origin were used, since the pool was made.
package struct ConnectionCounts: Sendable, Hashable {
    /// Connections opened (TCP, and TLS for https, completed).
    package var opened = 0
    /// Exchanges that got a connection an earlier exchange had used.
    package var reused = 0
    /// Exchanges (requests) that got a connection, new or reused.
    package var requests = 0

    package init(opened: Int = 0, reused: Int = 0, requests: Int = 0) {
        self.opened = opened
        self.reused = reused
        self.requests = requests
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
}

/// Told every ``ConnectionEvent`` with its origin (`scheme://host[:port]`), on the thread it happened on.
package typealias ConnectionEventObserver = @Sendable (_ origin: String, _ event: ConnectionEvent) -> Void

/// The per-origin counters of one connection pool, keyed by origin (`scheme://host[:port]`).
/// Bounded like the pool itself: one entry per origin the process talked to.
final class ConnectionMetrics: Sendable {
    typealias Event = ConnectionEvent

    private let counts = Locked([HTTPOrigin: ConnectionCounts]())
    private let observer: ConnectionEventObserver?

    init(observer: ConnectionEventObserver? = nil) {
        self.observer = observer
    }

    func record(_ event: Event, for origin: HTTPOrigin) {
        observer?("\(origin.scheme)://\(origin.hostHeader)", event)
        counts.withLock { counts in
            switch event {
            case .opened: counts[origin, default: ConnectionCounts()].opened += 1
            case .reused: counts[origin, default: ConnectionCounts()].reused += 1
            case .request: counts[origin, default: ConnectionCounts()].requests += 1
            }
        }
    }

    /// The counts so far, by `scheme://host[:port]` (the port only when not the scheme's default).
    func snapshot() -> [String: ConnectionCounts] {
        let counts = counts.withLock { $0 }
        return Dictionary(counts.map { ("\($0.key.scheme)://\($0.key.hostHeader)", $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
