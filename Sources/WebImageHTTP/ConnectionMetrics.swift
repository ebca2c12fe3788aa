import WebImageSupport

/// How the HTTP connections to one origin were used, since the pool was made.
public struct ConnectionCounts: Sendable, Hashable {
    /// Connections opened (TCP, and TLS for https, completed).
    public var connectionsOpened: Int
    /// Requests that went out on a connection an earlier request had used.
    public var connectionsReused: Int
    /// Requests sent (each got a connection, new or reused).
    public var requests: Int
    /// HTTP/2 streams opened: requests that went out as a stream of a shared connection (also
    /// counted in ``requests``).
    public var streamsOpened: Int

    /// Creates counts.
    public init(connectionsOpened: Int = 0, connectionsReused: Int = 0, requests: Int = 0, streamsOpened: Int = 0) {
        self.connectionsOpened = connectionsOpened
        self.connectionsReused = connectionsReused
        self.requests = requests
        self.streamsOpened = streamsOpened
    }

    // The short names, after the events, that the HTTP stack's tests read.
    package var opened: Int {
        get { connectionsOpened }
        set { connectionsOpened = newValue }
    }

    package var reused: Int {
        get { connectionsReused }
        set { connectionsReused = newValue }
    }

    package var streams: Int {
        get { streamsOpened }
        set { streamsOpened = newValue }
    }

    /// The counts of two pools to one origin, together.
    package static func + (lhs: ConnectionCounts, rhs: ConnectionCounts) -> ConnectionCounts {
        ConnectionCounts(connectionsOpened: lhs.connectionsOpened + rhs.connectionsOpened,
                         connectionsReused: lhs.connectionsReused + rhs.connectionsReused,
                         requests: lhs.requests + rhs.requests, streamsOpened: lhs.streamsOpened + rhs.streamsOpened)
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
            case .opened: counts[key, default: ConnectionCounts()].connectionsOpened += 1
            case .reused: counts[key, default: ConnectionCounts()].connectionsReused += 1
            case .request: counts[key, default: ConnectionCounts()].requests += 1
            case .stream: counts[key, default: ConnectionCounts()].streamsOpened += 1
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
