#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `sig`: the hex HMAC-SHA256 of the endpoint and the query string without `sig`, parameters in
/// the order sent: `/image?url=...&w=300` (``message(endpoint:query:)``), so a signature made for
/// one endpoint opens no other (`/image` and `/info` take the same `url`).
///
/// A signature over the query alone (``sign(_:)``, as made before signatures named their
/// endpoint) verifies only when `acceptsQueryOnly` is set: `--signature-migration`, on for one
/// release so that signers can move over, off by default after it.
///
/// Several keys may be valid at once (`--signing-key` repeated, or `--signing-key-file`): a
/// signature made with any of them verifies, so a key is rotated by adding the new one, moving
/// the signers over, then removing the old one.
public struct RequestSignature: Sendable {
    private let keys: [[UInt8]]

    /// A verifier for `key` (its UTF-8 bytes are the HMAC key).
    public init(key: String) {
        self.init(keys: [key])
    }

    /// A verifier accepting a signature made with any of `keys`; ``sign(_:)`` uses the first.
    public init(keys: [String]) {
        precondition(!keys.isEmpty, "a signature needs a key")
        self.keys = keys.map { Array($0.utf8) }
    }

    /// The raw query with every `sig` parameter taken out, the rest in order and as sent.
    public static func signedPart(of query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: true)
            .filter { item in
                let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                return (Hex.percentDecodedString(name) ?? String(name)) != "sig"
            }
            .joined(separator: "&")
    }

    /// The endpoints a signature may name.
    public enum Endpoint: String, Sendable, CaseIterable {
        /// `GET /image`.
        case image = "/image"
        /// `GET /info`.
        case info = "/info"
    }

    /// What a signature for `endpoint` covers: its path, `?`, and ``signedPart(of:)`` of `query`
    /// (`/image?url=...&w=300`). The path is the endpoint's own name, wherever the service is mounted.
    public static func message(endpoint: Endpoint, query: String) -> String {
        endpoint.rawValue + "?" + signedPart(of: query)
    }

    /// The signature of `query` (its `sig` left out) for `endpoint` under the first key.
    public func sign(endpoint: Endpoint, query: String) -> String {
        sign(Self.message(endpoint: endpoint, query: query))
    }

    /// The signature of `message` under the first key, lowercase hex. Over a bare query, this is
    /// the signature made before signatures named their endpoint (accepted only for migration).
    public func sign(_ message: String) -> String {
        Self.sign(message, key: keys[0])
    }

    private static func sign(_ message: String, key: [UInt8]) -> String {
        Hex.lowercase(HMACSHA256.authenticationCode(for: Array(message.utf8), key: key))
    }

    /// Checks `query`'s `sig` for `endpoint`; with `acceptsQueryOnly`, a signature over the
    /// query alone (as made before signatures named their endpoint) verifies too.
    /// - Throws: ``ServiceError/badSignature(_:)`` when it is missing or wrong.
    public func verify(query: String, signature: String?, endpoint: Endpoint, acceptsQueryOnly: Bool) throws {
        guard let signature, !signature.isEmpty else { throw ServiceError.badSignature("'sig' is required") }
        var messages = [Self.message(endpoint: endpoint, query: query)]
        if acceptsQueryOnly { messages.append(Self.signedPart(of: query)) }
        let given = Array(signature.lowercased().utf8)
        // Every key and message is tried, not only until one matches: how long a check took says
        // nothing about which key, if any, matched.
        var matched = false
        for message in messages {
            for key in keys {
                matched = Self.equalInConstantTime(given, Array(Self.sign(message, key: key).utf8)) || matched
            }
        }
        guard matched else { throw ServiceError.badSignature("'sig' does not match the query for \(endpoint.rawValue)") }
    }

    /// Checks `query`'s `sig` over the query alone, for any endpoint (the rule before signatures
    /// named their endpoint).
    /// - Throws: ``ServiceError/badSignature(_:)`` when it is missing or wrong.
    @available(*, deprecated, message: "a signature over the query alone opens every endpoint; use verify(query:signature:endpoint:acceptsQueryOnly:)")
    public func verify(query: String, signature: String?) throws {
        guard let signature, !signature.isEmpty else { throw ServiceError.badSignature("'sig' is required") }
        let message = Self.signedPart(of: query)
        let given = Array(signature.lowercased().utf8)
        var matched = false
        for key in keys {
            matched = Self.equalInConstantTime(given, Array(Self.sign(message, key: key).utf8)) || matched
        }
        guard matched else { throw ServiceError.badSignature("'sig' does not match the query") }
    }

    /// Compared in constant time: how long a wrong guess took says nothing about the right one.
    static func equalInConstantTime(_ given: [UInt8], _ wanted: [UInt8]) -> Bool {
        var difference = given.count ^ wanted.count
        for index in 0..<wanted.count {
            difference |= Int((index < given.count ? given[index] : 0) ^ wanted[index])
        }
        return difference == 0
    }
}
