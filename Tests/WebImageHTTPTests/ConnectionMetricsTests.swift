import Foundation
import Testing
@testable import WebImageHTTP
import WebImageSupport

/// The per-origin connection counters stay bounded when a process talks to ever-new hosts (a
/// server fetching URLs it is handed): the table and the `origin` labels it exports.
@Suite struct ConnectionMetricsTests {
    @Test func originsPastTheLimitAreCountedTogether() throws {
        let exported = ExportedOrigins()
        let metrics = ConnectionMetrics(observer: { origin, _ in exported.insert(origin) })
        let total = ConnectionMetrics.maximumOrigins + 44
        for index in 0..<total {
            metrics.record(.request, for: HTTPOrigin(try #require(URL(string: "https://host\(index).example/a.jpg"))))
        }
        // A known origin keeps its own row after the limit.
        metrics.record(.request, for: HTTPOrigin(try #require(URL(string: "https://host0.example/b.jpg"))))
        let snapshot = metrics.snapshot()
        #expect(snapshot.count == ConnectionMetrics.maximumOrigins + 1)
        #expect(snapshot[ConnectionMetrics.otherOrigins]?.requests == 44)
        #expect(snapshot["https://host0.example"]?.requests == 2)
        #expect(exported.count == ConnectionMetrics.maximumOrigins + 1)
    }
}

/// The distinct origins an observer was told about.
private final class ExportedOrigins: Sendable {
    private let origins = Locked(Set<String>())
    func insert(_ origin: String) { origins.withLock { _ = $0.insert(origin) } }
    var count: Int { origins.withLock { $0.count } }
}
