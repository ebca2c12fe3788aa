import Foundation
import Testing
@testable import WebImage
import WebImageSupport

/// SHA-1 (FIPS 180 examples) and the one HMAC over both hashes (RFC 2202 for SHA-1, RFC 4231
/// for SHA-256), beside `ImageModelTests.sha256KnownAnswers`.
@Suite struct HMACKnownAnswerTests {
    @Test func sha1KnownAnswers() {
        #expect(SHA1.hex(of: [UInt8]()) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(SHA1.hex(of: Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA1.hex(of: long) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        var incremental = SHA1()
        for byte in long { incremental.update([byte]) }
        #expect(Hex.lowercase(incremental.finalize()) == SHA1.hex(of: long))
        #expect(SHA1.hex(of: [UInt8](repeating: 0x61, count: 1_000_000)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func hmacSHA1RFC2202() {
        func code(_ key: [UInt8], _ message: [UInt8]) -> String { Hex.lowercase(HMACSHA1.authenticationCode(for: message, key: key)) }
        #expect(code([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8)) == "b617318655057264e28bc0b6fb378c8ef146be00")
        #expect(code(Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(code([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50)) == "125d7342b9ac11cd91a39af48aa17b4f63f175d3")
        // A key longer than the block is hashed first.
        #expect(code([UInt8](repeating: 0xaa, count: 80), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
            == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    @Test func hmacSHA256RFC4231() {
        func code(_ key: [UInt8], _ message: [UInt8]) -> String { Hex.lowercase(HMACSHA256.authenticationCode(for: message, key: key)) }
        #expect(code([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8))
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(code(Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(code([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
