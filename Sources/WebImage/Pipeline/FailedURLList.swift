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

    /// Whether `error` marks a URL as bad: permanent failures of the URL itself. Transient
    /// failures (``WebImageError/isTransient``: cancellation and cache-only misses among them)
    /// and local vetoes never do.
    static func records(_ error: WebImageError) -> Bool {
        switch error {
        case .rejected, .blockedFailedURL: false
        default: !error.isTransient
        }
    }
}
