/// SHA-1 (FIPS 180-4), for thumbor's URL hashes (HMAC-SHA1) and nothing else: SHA-1 is broken for
/// collisions, which HMAC does not rely on, and thumbor's clients sign with it.
///
/// As ``SHA256``: no branch or table lookup depends on the data, so the time depends on the
/// input's length only; owned rather than taken from swift-crypto for the reason given there.
package struct SHA1: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)
    private var block = [UInt8](repeating: 0, count: 64)
    private var blockCount = 0
    private var totalBytes: UInt64 = 0

    /// A fresh hash.
    package init() {}

    /// The hex digest of `bytes`.
    package static func hex<Bytes: Sequence>(of bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hash = SHA1()
        hash.update(bytes)
        return Hex.lowercase(hash.finalize())
    }

    /// Adds bytes.
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if handled == nil {
            let array = Array(bytes)
            array.withUnsafeBytes { update($0) }
        }
    }

    /// Adds the bytes in `buffer`.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        totalBytes &+= UInt64(buffer.count)
        var index = 0
        if blockCount > 0 {
            while blockCount < 64, index < buffer.count {
                block[blockCount] = buffer[index]
                blockCount += 1
                index += 1
            }
            if blockCount == 64 {
                block.withUnsafeBytes { compress(UnsafeRawBufferPointer(rebasing: $0[0..<64])) }
                blockCount = 0
            }
        }
        while buffer.count - index >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: buffer[index..<index + 64]))
            index += 64
        }
        while index < buffer.count {
            block[blockCount] = buffer[index]
            blockCount += 1
            index += 1
        }
    }

    /// Finishes and returns the 20-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var padding: [UInt8] = [0x80]
        let afterPad = (blockCount + 1) % 64
        padding += [UInt8](repeating: 0, count: afterPad <= 56 ? 56 - afterPad : 120 - afterPad)
        for shift in stride(from: 56, through: 0, by: -8) { padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        let saved = totalBytes
        padding.withUnsafeBytes { update($0) }
        totalBytes = saved
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            digest += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                       UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return digest
    }

    private mutating func compress(_ chunk: UnsafeRawBufferPointer) {
        state = withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for i in 0..<16 {
                w[i] = UInt32(chunk[i * 4]) << 24 | UInt32(chunk[i * 4 + 1]) << 16
                    | UInt32(chunk[i * 4 + 2]) << 8 | UInt32(chunk[i * 4 + 3])
            }
            for i in 16..<80 {
                w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotatedLeft(1)
            }
            var (a, b, c, d, e) = state
            for i in 0..<80 {
                // The round's function and constant by round number, never by data.
                let (f, k): (UInt32, UInt32) = switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A827999)
                case 20..<40: (b ^ c ^ d, 0x6ED9EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1BBCDC)
                default: (b ^ c ^ d, 0xCA62C1D6)
                }
                let t = a.rotatedLeft(5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b.rotatedLeft(30), a, t)
            }
            return (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
        }
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt32) -> UInt32 { (self << count) | (self >> (32 - count)) }
}
