#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// URLs that failed permanently, skipped until retried; the lock guards only the set.
final class FailedURLList: Sendable {
    private let urls = Locked<Set<URL>>([])

    func contains(_ url: URL) -> Bool { urls.withLock { $0.contains(url) } }
    func insert(_ url: URL) { _ = urls.withLock { $0.insert(url) } }
    func remove(_ url: URL) { _ = urls.withLock { $0.remove(url) } }
    func removeAll() { urls.withLock { $0.removeAll() } }
    var count: Int { urls.withLock { $0.count } }

    /// Whether `error` marks a URL as bad: permanent failures of the URL itself. Transient network
    /// failures, cancellation, cache-only misses and local vetoes never do.
    static func records(_ error: WebImageError) -> Bool {
        if error.isTransient { return false }
        switch error {
        case .rejected, .blockedFailedURL, .notCached, .cancelled: return false
        default: return true
        }
    }
}
