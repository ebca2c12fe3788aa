#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import WebImageSupport

/// Which HTTP proxy requests go through, written as curl's `http_proxy`, `https_proxy` and
/// `no_proxy` are: one for http URLs, one for https URLs, and the hosts that bypass both. By
/// default (``environment(_:)``) they are read from the process's environment when the settings
/// are made.
///
/// A proxy is `http://[user:password@]host[:port]` (the scheme may be left out; the port
/// defaults to 1080, as in curl). Plain http requests are forwarded by it; https requests go
/// through a `CONNECT` tunnel, with TLS to the server end to end. The user and password, if
/// given, are sent to the proxy as Basic `Proxy-Authorization`, never to the server. A proxy
/// that answers 407 fails the load (permanent); a proxy URL that is not usable (another scheme
/// than http, not a URL) fails every load that would use it as an invalid request, never
/// sending it direct.
///
/// ``noProxy`` lists the hosts that go direct, matched as curl does: comma-separated,
/// case-insensitive; `*` alone means every host; `example.com` (or `.example.com`) matches
/// that host and every name under it; an IP address matches itself, `10.0.0.0/8` a range;
/// `host:port` matches that port only. As in curl, loopback hosts (`localhost`, `127.0.0.1`)
/// go through the proxy unless they are listed.
///
/// With a connect-address policy, the server's name is resolved and checked here before the
/// request goes to the proxy, so a refused name is never sent. The proxy resolves the name again
/// itself and could get another answer: where that matters, the proxy should enforce the same rule.
public struct HTTPProxySettings: Sendable, Hashable {
    /// The proxy of http URLs, `nil` for none.
    public var httpProxy: String? { didSet { http = Self.parse(httpProxy) } }
    /// The proxy of https URLs, `nil` for none.
    public var httpsProxy: String? { didSet { https = Self.parse(httpsProxy) } }
    /// The hosts that bypass the proxies (see above), `nil` for none.
    public var noProxy: String? { didSet { bypass = NoProxyList(noProxy ?? "") } }

    // The texts above parsed, kept in step by their observers: parsed once, not on every load.
    private var http: Result<HTTPProxy, HTTPLoadError>?
    private var https: Result<HTTPProxy, HTTPLoadError>?
    private var bypass: NoProxyList

    /// No proxy: every request goes straight to its server.
    public static let direct = HTTPProxySettings()

    /// Settings with these proxies (`nil` or empty: that scheme goes direct) and a `no_proxy` list.
    public init(httpProxy: String? = nil, httpsProxy: String? = nil, noProxy: String? = nil) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
        http = Self.parse(httpProxy)
        https = Self.parse(httpsProxy)
        bypass = NoProxyList(noProxy ?? "")
    }

    /// One proxy for http and https URLs.
    public init(proxy: String, noProxy: String? = nil) {
        self.init(httpProxy: proxy, httpsProxy: proxy, noProxy: noProxy)
    }

    private static func parse(_ text: String?) -> Result<HTTPProxy, HTTPLoadError>? {
        guard let text, !text.trimmingSpacesAndTabs.isEmpty else { return nil }
        do { return .success(try HTTPProxy(parsing: text)) } catch { return .failure(error) }
    }

    /// The settings of `environment`: `http_proxy`, `https_proxy` and `no_proxy`, each in lower
    /// or upper case (lower case wins when both are set, as in curl). An empty variable counts as unset.
    public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> HTTPProxySettings {
        func value(_ name: String) -> String? {
            for key in [name.lowercased(), name.uppercased()] {
                if let value = environment[key], !value.trimmingSpacesAndTabs.isEmpty { return value }
            }
            return nil
        }
        return HTTPProxySettings(httpProxy: value("http_proxy"), httpsProxy: value("https_proxy"), noProxy: value("no_proxy"))
    }

    /// The HTTP stack's older name for ``environment(_:)``.
    package static func fromEnvironment(_ environment: [String: String]) -> HTTPProxySettings {
        self.environment(environment)
    }

    /// The first proxy set that loads could not use (another scheme than http, not a URL), as
    /// the error those loads fail with; `nil` when every proxy set is usable.
    package var problem: HTTPLoadError? {
        for parsed in [http, https] {
            if case .failure(let error) = parsed { return error }
        }
        return nil
    }

    /// Whether two settings name the same proxies and bypass list.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.httpProxy == rhs.httpProxy && lhs.httpsProxy == rhs.httpsProxy && lhs.noProxy == rhs.noProxy
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(httpProxy)
        hasher.combine(httpsProxy)
        hasher.combine(noProxy)
    }

    /// Whether any proxy is set.
    package var usesProxy: Bool { http != nil || https != nil }

    /// The proxy for a request to `url`, `nil` to go direct.
    package func proxy(for url: URL) throws(HTTPLoadError) -> HTTPProxy? {
        try proxy(for: HTTPOrigin(url))
    }

    /// The proxy for a request to `origin`, `nil` to go direct.
    func proxy(for origin: HTTPOrigin) throws(HTTPLoadError) -> HTTPProxy? {
        guard let chosen = origin.scheme == "https" ? https : http else { return nil }
        if bypass.matches(host: origin.host, port: origin.port) { return nil }
        return try chosen.get()
    }
}

/// A `NO_PROXY` list, matched as curl does: entries separated by commas (spaces around them
/// ignored), case-insensitive. `*` alone bypasses every host. A host name entry matches that
/// host and every name under it (`example.com` matches `img.example.com`, not `badexample.com`);
/// a leading dot is ignored (`.example.com` is the same entry). An IP literal entry (IPv6 with or
/// without brackets) matches that address as written in the URL, and an address with a prefix
/// length (`10.0.0.0/8`, `fd00::/8`) matches the addresses in it. An entry may end in `:port`,
/// matching that port only.
///
/// As in curl, loopback hosts (`localhost`, `127.0.0.1`) go through the proxy unless listed.
struct NoProxyList: Sendable {
    private struct Entry: Sendable {
        var host: String
        var port: Int?
        /// For an address with a prefix length: the network's bytes and the prefix length.
        var network: (bytes: [UInt8], prefix: Int)?
    }

    private var all = false
    private var entries: [Entry] = []

    init(_ text: String) {
        for raw in text.split(separator: ",") {
            var item = raw.trimmingSpacesAndTabs.lowercased()
            guard !item.isEmpty else { continue }
            if item == "*" {
                all = true
                continue
            }
            var port: Int?
            if item.hasPrefix("[") {
                // [v6] or [v6]:port
                guard let close = item.firstIndex(of: "]") else { continue }
                let rest = item[item.index(after: close)...]
                if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
                item = String(item[item.index(after: item.startIndex)..<close])
            } else if item.filter({ $0 == ":" }).count == 1, let colon = item.firstIndex(of: ":") {
                // host:port (a bare IPv6 address has several colons).
                port = Int(item[item.index(after: colon)...])
                if port == nil { continue }
                item = String(item[..<colon])
            }
            var network: (bytes: [UInt8], prefix: Int)?
            if let slash = item.firstIndex(of: "/") {
                guard let prefix = Int(item[item.index(after: slash)...]),
                      let bytes = Self.addressBytes(String(item[..<slash])), prefix >= 0, prefix <= bytes.count * 8 else { continue }
                network = (bytes, prefix)
                item = String(item[..<slash])
            }
            while item.hasPrefix(".") { item.removeFirst() }
            while item.hasSuffix(".") { item.removeLast() }
            guard !item.isEmpty else { continue }
            entries.append(Entry(host: item, port: port, network: network))
        }
    }

    /// Whether a request to `host` (lowercased, IPv6 without brackets) on `port` goes direct.
    func matches(host: String, port: Int) -> Bool {
        if all { return true }
        guard !entries.isEmpty else { return false }
        var name = host
        while name.hasSuffix(".") { name.removeLast() }
        let address = Self.addressBytes(name)
        for entry in entries {
            if let wanted = entry.port, wanted != port { continue }
            if let network = entry.network {
                if let address, address.count == network.bytes.count, Self.sharePrefix(address, network.bytes, bits: network.prefix) {
                    return true
                }
                continue
            }
            if name == entry.host { return true }
            // Addresses match exactly or by prefix length; only names match by suffix.
            if address == nil, name.hasSuffix("." + entry.host) { return true }
            if let address, let listed = Self.addressBytes(entry.host), address == listed { return true }
        }
        return false
    }

    /// The bytes of an IPv4 or IPv6 literal, `nil` for a host name.
    static func addressBytes(_ text: String) -> [UInt8]? {
        guard let address = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        default:
            return nil
        }
    }

    private static func sharePrefix(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
        var remaining = bits
        for index in a.indices where remaining > 0 {
            let take = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if a[index] & mask != b[index] & mask { return false }
            remaining -= take
        }
        return true
    }
}
