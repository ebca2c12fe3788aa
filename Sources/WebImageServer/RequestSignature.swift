#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `sig`: the hex HMAC-SHA256 of the query string without `sig`, parameters in the order sent.
public struct RequestSignature: Sendable {
    private let key: [UInt8]

    /// A verifier for `key` (its UTF-8 bytes are the HMAC key).
    public init(key: String) {
        self.key = Array(key.utf8)
    }

    /// The raw query with every `sig` parameter taken out, the rest in order and as sent.
    public static func signedPart(of query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: true)
            .filter { item in
                let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                return (String(name).removingPercentEncoding ?? String(name)) != "sig"
            }
            .joined(separator: "&")
    }

    /// The signature of `message`, lowercase hex.
    public func sign(_ message: String) -> String {
        Self.hex(HMACSHA256.authenticationCode(for: Array(message.utf8), key: key))
    }

    /// Checks `query`'s `sig` against the rest of it.
    /// - Throws: ``ServiceError/badSignature(_:)`` when it is missing or wrong.
    public func verify(query: String, signature: String?) throws {
        guard let signature, !signature.isEmpty else { throw ServiceError.badSignature("'sig' is required") }
        let expected = sign(Self.signedPart(of: query))
        // Compared in constant time: how long a wrong guess took says nothing about the right one.
        let given = Array(signature.lowercased().utf8), wanted = Array(expected.utf8)
        var difference = given.count ^ wanted.count
        for index in 0..<wanted.count {
            difference |= Int((index < given.count ? given[index] : 0) ^ wanted[index])
        }
        guard difference == 0 else { throw ServiceError.badSignature("'sig' does not match the query") }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// HMAC (RFC 2104) over the library's SHA-256.
enum HMACSHA256 {
    static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        var block = key
        if block.count > 64 {
            var hash = SHA256()
            hash.update(block)
            block = hash.finalize()
        }
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
