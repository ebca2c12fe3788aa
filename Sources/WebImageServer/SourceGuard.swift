#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import WebImage

/// The SSRF guard and the allowed-source list: which sources the service may fetch and connect to.
///
/// With an ``SourceAllowList`` (`--allowed-source`), a source or redirect hop on none of its
/// prefixes is refused before anything else. Then, by default, only public addresses: loopback, private (RFC 1918), carrier-grade NAT,
/// link-local, unique-local, unspecified, multicast and reserved addresses are refused, in IPv4
/// and IPv6, IPv4-mapped, -compatible, NAT64 and 6to4 IPv6 addresses by the IPv4 address inside;
/// local-use NAT64 (`64:ff9b:1::/48`) and Teredo (`2001::/32`) tunnels are refused whole.
/// `--allow-private-sources` lifts it for every host, an `--allow-private-source HOST[:PORT]`
/// entry (formerly `--allow-source`) for that host (on that port); neither lifts the allowed-source list.
///
/// It is applied three times: to the first URL before anything is fetched (scheme and IP
/// literals), to every redirect hop (the downloader's redirect policy), and to every address a
/// connection is opened to, after name resolution (the downloader's connect-address policy),
/// so that the address checked is the address connected to.
public struct SourceGuard: Sendable {
    /// One `--allow-private-source` entry.
    struct Entry: Hashable, Sendable {
        var host: String
        var port: Int?
    }

    private let allowsPrivate: Bool
    private let entries: [Entry]
    /// The `--allowed-source` prefixes.
    public let allowList: SourceAllowList

    /// A guard with the service's settings.
    /// - Parameters:
    ///   - allowPrivateSources: `--allow-private-sources`: no address is refused for not being
    ///     public, for any host (the allowed-source list still applies).
    ///   - privateSourceHosts: `--allow-private-source` entries, `HOST` or `HOST:PORT`.
    ///   - allowedSourcePrefixes: `--allowed-source` prefixes (see ``SourceAllowList``).
    /// - Throws: ``ServiceError`` for a malformed entry or prefix.
    public init(allowPrivateSources: Bool, privateSourceHosts: [String], allowedSourcePrefixes: [String] = []) throws {
        allowsPrivate = allowPrivateSources
        entries = try privateSourceHosts.map(Self.parse)
        allowList = try SourceAllowList(allowedSourcePrefixes)
    }

    /// A guard without an allowed-source list.
    @available(*, deprecated, renamed: "init(allowPrivateSources:privateSourceHosts:allowedSourcePrefixes:)")
    public init(allowPrivateSources: Bool, allowedSources: [String]) throws {
        try self.init(allowPrivateSources: allowPrivateSources, privateSourceHosts: allowedSources)
    }

    static func parse(_ text: String) throws -> Entry {
        let lower = text.lowercased()
        // [v6]:port, [v6], v6 (more than one colon), host:port, host.
        if lower.hasPrefix("["), let close = lower.firstIndex(of: "]") {
            let host = String(lower[lower.index(after: lower.startIndex)..<close])
            let rest = lower[lower.index(after: close)...]
            if rest.isEmpty { return Entry(host: host, port: nil) }
            guard rest.first == ":", let port = Int(rest.dropFirst()), (1...65535).contains(port) else {
                throw ServiceError.badParameter("bad --allow-private-source '\(text)'")
            }
            return Entry(host: host, port: port)
        }
        let colons = lower.filter { $0 == ":" }.count
        if colons == 1, let colon = lower.firstIndex(of: ":") {
            guard let port = Int(lower[lower.index(after: colon)...]), (1...65535).contains(port), colon != lower.startIndex else {
                throw ServiceError.badParameter("bad --allow-private-source '\(text)'")
            }
            return Entry(host: String(lower[..<colon]), port: port)
        }
        guard !lower.isEmpty else { throw ServiceError.badParameter("empty --allow-private-source") }
        return Entry(host: lower, port: nil)
    }

    /// Whether `host` (lowercased, as in the URL) on `port` is on the allow-list.
    func isListed(host: String, port: Int) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return entries.contains { $0.host == bare && ($0.port == nil || $0.port == port) }
    }

    /// Checks a URL before it is fetched or followed: http or https (or a local or S3 source,
    /// which only the list restricts), on the allowed-source list when there is one; an IP literal must be public unless listed. Host names are checked
    /// when they are resolved (``allowsConnection(host:port:address:)``).
    /// - Returns: why it is refused, or `nil`.
    public func refusal(for url: URL) -> String? {
        let scheme = url.scheme?.lowercased()
        // A local source opens no connection: only the list applies (the root confines it).
        // An S3 read goes to the configured endpoint only, which the operator chose.
        if scheme == "local" || scheme == "s3" { return allowList.refusal(for: url) }
        guard let scheme, scheme == "http" || scheme == "https" else {
            return "only http and https sources are allowed"
        }
        if let reason = allowList.refusal(for: url) { return reason }
        guard let host = url.host?.lowercased(), !host.isEmpty else { return "the URL has no host" }
        if allowsPrivate { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        if isListed(host: host, port: port) { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let address = try? SocketAddress(ipAddress: bare, port: port), !Self.isPublic(address) {
            return "\(bare) is not a public address"
        }
        return nil
    }

    /// The connect-time check (``/WebImage/ImageDownloader/ConnectAddressPolicy``): whether a connection to `address`,
    /// which `host` resolved to, may be opened.
    public func allowsConnection(host: String, port: Int, address: SocketAddress) -> Bool {
        allowsPrivate || isListed(host: host, port: port) || Self.isPublic(address)
    }

    /// The redirect check (``/WebImage/ImageDownloader/RedirectPolicy``): a hop goes to http or https only (never
    /// to a local file), on the list and through the private-address guard.
    public func allowsRedirect(from: URL, to: URL) -> Bool {
        guard let scheme = to.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return refusal(for: to) == nil
    }

    /// Whether `address` is a public unicast address.
    public static func isPublic(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4):
            let raw = UInt32(bigEndian: v4.address.sin_addr.s_addr)
            return isPublic(v4: raw)
        case .v6(let v6):
            var storage = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &storage) { Array($0) }
            return isPublic(v6: bytes)
        default:
            return false
        }
    }

    /// Whether an IPv4 address (host order) is public.
    static func isPublic(v4 a: UInt32) -> Bool {
        func within(_ network: UInt32, _ bits: UInt32) -> Bool {
            let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
            return a & mask == network & mask
        }
        let refused: [(UInt32, UInt32)] = [
            (0x0000_0000, 8),   // 0.0.0.0/8: unspecified, "this network"
            (0x0A00_0000, 8),   // 10/8 private
            (0x6440_0000, 10),  // 100.64/10 carrier-grade NAT
            (0x7F00_0000, 8),   // 127/8 loopback
            (0xA9FE_0000, 16),  // 169.254/16 link-local (cloud metadata)
            (0xAC10_0000, 12),  // 172.16/12 private
            (0xC000_0000, 24),  // 192.0.0/24 IETF protocol assignments
            (0xC000_0200, 24),  // 192.0.2/24 documentation
            (0xC0A8_0000, 16),  // 192.168/16 private
            (0xC612_0000, 15),  // 198.18/15 benchmarking
            (0xC633_6400, 24),  // 198.51.100/24 documentation
            (0xCB00_7100, 24),  // 203.0.113/24 documentation
            (0xE000_0000, 4),   // 224/4 multicast
            (0xF000_0000, 4),   // 240/4 reserved, broadcast
        ]
        return !refused.contains { within($0.0, $0.1) }
    }

    /// Whether an IPv6 address (16 bytes, network order) is public.
    static func isPublic(v6 b: [UInt8]) -> Bool {
        guard b.count == 16 else { return false }
        func v4(at offset: Int) -> UInt32 { b.bigEndianUInt32(at: offset) ?? 0 }
        let firstTen = b[0..<10].allSatisfy { $0 == 0 }
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, which includes :: and ::1).
        if firstTen, b[10] == 0xff, b[11] == 0xff { return isPublic(v4: v4(at: 12)) }
        if firstTen, b[10] == 0, b[11] == 0 { return false }
        // 64:ff9b::/96 NAT64 carries an IPv4 address.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4..<12].allSatisfy({ $0 == 0 }) {
            return isPublic(v4: v4(at: 12))
        }
        // 64:ff9b:1::/48, NAT64 for local use (RFC 8215): where the IPv4 address sits depends on
        // the operator's prefix length, so the whole range is refused.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4] == 0x00, b[5] == 0x01 { return false }
        // 2001::/32 Teredo: a tunnel to an IPv4 host (its server's and its client's addresses inside).
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x00, b[3] == 0x00 { return false }
        // 2002::/16 6to4 carries one too.
        if b[0] == 0x20, b[1] == 0x02 { return isPublic(v4: v4(at: 2)) }
        if b[0] & 0xfe == 0xfc { return false }                 // fc00::/7 unique-local
        if b[0] == 0xfe, b[1] & 0xc0 == 0x80 { return false }   // fe80::/10 link-local
        if b[0] == 0xfe, b[1] & 0xc0 == 0xc0 { return false }   // fec0::/10 site-local (deprecated)
        if b[0] == 0xff { return false }                        // ff00::/8 multicast
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return false } // 2001:db8::/32 documentation
        return true
    }
}
