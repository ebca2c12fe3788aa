/// A hash HMAC can key: SHA-256 for the service's `sig` and AWS Signature Version 4, SHA-1 for
/// thumbor's URL hashes.
package protocol HMACHash {
    /// The compression function's block, in bytes (64 for SHA-1 and SHA-256).
    static var blockSize: Int { get }
    /// A fresh hash.
    init()
    /// Adds bytes.
    mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8
    /// Finishes and returns the digest.
    mutating func finalize() -> [UInt8]
}

/// HMAC (RFC 2104) over one of the library's own hashes: one construction, so the two keyed
/// hashes the project needs cannot drift apart.
package enum HMAC<Hash: HMACHash> {
    /// The authentication code of `message` under `key` (as long as `Hash`'s digest).
    package static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        var block = key
        if block.count > Hash.blockSize {
            var hash = Hash()
            hash.update(block)
            block = hash.finalize()
        }
        block += [UInt8](repeating: 0, count: Hash.blockSize - block.count)
        var inner = Hash()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = Hash()
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}

/// HMAC-SHA256: request signatures (`sig`) and AWS Signature Version 4.
package typealias HMACSHA256 = HMAC<SHA256>
/// HMAC-SHA1: thumbor's URL hashes (`--dialect thumbor`), nothing else.
package typealias HMACSHA1 = HMAC<SHA1>

extension SHA256: HMACHash {
    package static var blockSize: Int { 64 }
}

extension SHA1: HMACHash {
    package static var blockSize: Int { 64 }
}
