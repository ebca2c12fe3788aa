#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A minimal in-memory cookie store, one per downloader.
///
/// Cookies are bound to the exact origin (scheme, host, port) that set them: stricter than
/// browsers (which ignore the port), so a redirect to another port never carries them.
/// Attributes other than `Max-Age=0` (delete) are ignored.
final class CookieJar: Sendable {
    // All stored cookies, by origin then name.
    private let cookies = Locked([HTTPOrigin: [String: String]]())

    /// Stores the `Set-Cookie` header values of a response from `url`.
    func store(setCookies values: [String], from url: URL) {
        let origin = HTTPOrigin(url)
        var updates: [(String, String?)] = []
        for value in values {
            let parts = value.split(separator: ";").map { $0.trimmingSpacesAndTabs }
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let cookieName = String(pair[..<equals]).trimmingSpacesAndTabs
            guard !cookieName.isEmpty else { continue }
            let deleted = parts.dropFirst().contains { $0.lowercased().filter { $0 != " " } == "max-age=0" }
            updates.append((cookieName, deleted ? nil : String(pair[pair.index(after: equals)...])))
        }
        guard !updates.isEmpty else { return }
        cookies.withLock { jar in
            for (name, value) in updates { jar[origin, default: [:]][name] = value }
        }
    }

    /// Whether no cookie is stored (then requests need no `Cookie` header).
    var isEmpty: Bool { cookies.withLock { $0.isEmpty } }

    /// The `Cookie` header for a request to `url`, if any cookie matches its origin.
    func header(for url: URL) -> String? {
        guard !isEmpty else { return nil }
        let stored = cookies.withLock { $0[HTTPOrigin(url)] } ?? [:]
        guard !stored.isEmpty else { return nil }
        return stored.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }
}
