import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// Every hex text the library and the service write or read, pinned to the byte: digests and
/// signatures in lowercase, colours and percent-escapes in uppercase, colours and keys read in
/// either case.
@Suite("Hex text")
struct HexTextTests {
    @Test func digestsAndSignaturesAreLowercase() {
        #expect(Hex.lowercase([0x00, 0x0f, 0x10, 0xa5, 0xff]) == "000f10a5ff")
        #expect(Hex.lowercase([UInt8]()) == "")
    }

    @Test func coloursInTransformerIdentifiersAreUppercase() {
        #expect(RGBAColor(red: 0x12, green: 0xab, blue: 0x00, alpha: 0x7f).hexString == "#12AB007F")
        #expect(RGBAColor.white.hexString == "#FFFFFFFF")
        #expect(RGBAColor.clear.hexString == "#00000000")
    }

    @Test func s3KeysArePercentEncodedInUppercase() {
        #expect(S3RequestSigner.canonicalPath(Array("a b/é~_.-*%+\u{0}\u{7f}Z9".utf8)) == "a%20b/%C3%A9~_.-%2A%25%2B%00%7FZ9")
        #expect(S3RequestSigner.canonicalPath([0xff, 0x0a]) == "%FF%0A")
    }

    @Test func thumborSourcesArePercentEncodedInUppercase() {
        #expect(ThumborDialect.escaped("http://x/a b\"é<>\\^`{|}\u{1}\u{7f}~%") == "http://x/a%20b%22%C3%A9%3C%3E%5C%5E%60%7B%7C%7D%01%7F~%")
    }

    @Test func hexColoursAreReadInEitherCase() {
        #expect(ImageParameters.Options.color(hex: "12aBcD") == RGBAColor(red: 0x12, green: 0xab, blue: 0xcd))
        #expect(ImageParameters.Options.color(hex: "12aBcD80") == RGBAColor(red: 0x12, green: 0xab, blue: 0xcd, alpha: 0x80))
        for bad in ["12aBc", "12aBcG", "+12345", "12 345", "", "1234567", "123456789a"] {
            #expect(ImageParameters.Options.color(hex: bad) == nil, "\(bad)")
        }
    }

    @Test func temporaryNamesAreSixteenLowercaseHexDigits() {
        for _ in 0..<64 {
            let name = DiskCacheFileNames.temporaryName()
            #expect(name.hasPrefix(".tmp-") && name.utf8.count == 21, "\(name)")
            #expect(name.utf8.dropFirst(5).allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, "\(name)")
            #expect(DiskCacheFileNames.isTemporaryName(name))
        }
        #expect(DiskCacheFileNames.isEntryName(String(repeating: "0123456789abcdef", count: 4) + ".png"))
        #expect(!DiskCacheFileNames.isEntryName(String(repeating: "0123456789ABCDEF", count: 4)))
    }

    @Test func hexTextRoundTripsInEitherCase() {
        let bytes: [UInt8] = [0x00, 0x01, 0x7f, 0x80, 0xab, 0xff]
        #expect(Hex.uppercase(bytes) == "00017F80ABFF")
        #expect(Hex.bytes(Hex.lowercase(bytes)) == bytes && Hex.bytes(Hex.uppercase(bytes)) == bytes)
        #expect(Hex.bytes("") == [] && Hex.bytes("0") == nil && Hex.bytes("0g") == nil && Hex.bytes("-1") == nil)
        #expect((0...255).map { Hex.percentEncoded(UInt8($0)) }.allSatisfy { Hex.percentDecoded($0)?.count == 1 })
        #expect(Hex.percentEncoded(0x2f) == "%2F" && Hex.percentEncoded(0) == "%00")
        #expect((0...255).filter { Hex.isLowercaseDigit(UInt8($0)) }.map { UInt8($0) } == Array("0123456789abcdef".utf8))
    }
}
