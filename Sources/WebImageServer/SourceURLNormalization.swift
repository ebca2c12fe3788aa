#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One spelling per source, so that the output cache, the source cache, the result store and
/// the ETag hold one entry for it however a request writes it (`LOCAL:///a.jpg`, `local:a.jpg`
/// and `local:////a.jpg` name one file).
///
/// - every scheme is lowercased;
/// - http(s): the host lowercased, the scheme's default port dropped, an empty path as `/`;
/// - `local:`: without a host, the path as `local:///` and its non-empty segments (as written:
///   percent-encodings are kept, the local root decodes them); with a host it is left for the
///   root to refuse;
/// - the rest of the URL is kept as sent (a path's case and encoding, a query: an origin may
///   tell them apart).
enum SourceURL {
    /// The normal spelling of `url` (itself when it has none other).
    static func normalized(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme?.lowercased() else {
            return url
        }
        components.scheme = scheme
        switch scheme {
        case "http", "https":
            if let host = components.percentEncodedHost { components.percentEncodedHost = host.lowercased() }
            if components.port == (scheme == "http" ? 80 : 443) { components.port = nil }
            if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        case "local":
            guard components.percentEncodedHost?.isEmpty ?? true, components.user == nil, components.port == nil else { break }
            let segments = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: true)
            guard !segments.isEmpty else { break }
            components.percentEncodedHost = ""
            components.percentEncodedPath = "/" + segments.joined(separator: "/")
        default:
            break
        }
        return components.url ?? url
    }
}
