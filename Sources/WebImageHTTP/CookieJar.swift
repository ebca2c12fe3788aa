#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageSupport

/// A minimal in-memory store of origin-bound session cookies, one per downloader.
///
/// Cookies are bound to the exact origin (scheme, host, port) that set them: stricter than
/// browsers (which ignore the port), so a redirect to another port never carries them. They
/// live as long as the downloader: `Path`, `Domain`, `Expires` and a positive `Max-Age` are
/// ignored; `Max-Age=0` (or negative) deletes. The jar is bounded so a server cannot grow it, or
/// the `Cookie` header, without limit: a cookie larger than ``maxCookieBytes`` is dropped, an
/// origin keeps its ``maxCookiesPerOrigin`` most recent cookies within ``maxHeaderBytes``, and
/// the jar keeps the ``maxOrigins`` origins that set a cookie most recently.
package final class CookieJar: Sendable {
    /// The most origins with cookies; the one that set a cookie least recently goes first.
    static let maxOrigins = 100
    /// The most cookies kept for one origin; the least recently set goes first.
    static let maxCookiesPerOrigin = 50
    /// The largest cookie kept, name and value together (browsers keep 4 KB).
    static let maxCookieBytes = 4096
    /// The largest `Cookie` header sent to one origin.
    static let maxHeaderBytes = 8192

    private struct Cookie {
        var name: String
        var value: String
        /// Its share of the `Cookie` header, separator included.
        var size: Int { name.utf8.count + value.utf8.count + 3 }
    }

    private struct Jar {
        /// By origin, least recently set first.
        var cookies: [HTTPOrigin: [Cookie]] = [:]
        /// Origins by when they last set a cookie, least recent first.
        var origins: [HTTPOrigin] = []
    }

    // Every stored cookie and the order of origins live behind this lock.
    private let jar = Locked(Jar())

    package init() {}

    /// Stores the `Set-Cookie` header values of a response from `url`.
    package func store(setCookies values: [String], from url: URL) {
        let origin = HTTPOrigin(url)
        var updates: [(String, String?)] = []
        for value in values {
            let parts = value.split(separator: ";").map { $0.trimmingSpacesAndTabs }
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let cookieName = String(pair[..<equals]).trimmingSpacesAndTabs
            guard !cookieName.isEmpty else { continue }
            let deleted = parts.dropFirst().contains { part in
                let attribute = part.lowercased().filter { $0 != " " }
                guard attribute.hasPrefix("max-age=") else { return false }
                return Int(attribute.dropFirst("max-age=".count)).map { $0 <= 0 } ?? false
            }
            let cookieValue = String(pair[pair.index(after: equals)...])
            // Oversized: dropped as browsers do, before it takes any room.
            if !deleted && cookieName.utf8.count + cookieValue.utf8.count > Self.maxCookieBytes { continue }
            updates.append((cookieName, deleted ? nil : cookieValue))
        }
        guard !updates.isEmpty else { return }
        jar.withLock { jar in
            var cookies = jar.cookies[origin] ?? []
            for (name, value) in updates {
                cookies.removeAll { $0.name == name }
                if let value { cookies.append(Cookie(name: name, value: value)) }
            }
            var bytes = cookies.reduce(0) { $0 + $1.size }
            while cookies.count > Self.maxCookiesPerOrigin || bytes > Self.maxHeaderBytes {
                bytes -= cookies.removeFirst().size
            }
            jar.origins.removeAll { $0 == origin }
            if cookies.isEmpty {
                jar.cookies[origin] = nil
                return
            }
            jar.cookies[origin] = cookies
            jar.origins.append(origin)
            while jar.origins.count > Self.maxOrigins {
                jar.cookies[jar.origins.removeFirst()] = nil
            }
        }
    }

    /// Whether no cookie is stored (then requests need no `Cookie` header).
    package var isEmpty: Bool { jar.withLock { $0.cookies.isEmpty } }

    /// How many origins have cookies.
    var originCount: Int { jar.withLock { $0.cookies.count } }

    /// The `Cookie` header for a request to `url`, if any cookie matches its origin.
    package func header(for url: URL) -> String? {
        guard !isEmpty else { return nil }
        let stored = jar.withLock { $0.cookies[HTTPOrigin(url)] } ?? []
        guard !stored.isEmpty else { return nil }
        return stored.sorted { $0.name < $1.name }.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
