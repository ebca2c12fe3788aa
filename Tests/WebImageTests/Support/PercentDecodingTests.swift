import Foundation
import Testing
import WebImage

/// The one percent-decoder (`Hex.percentDecoded`) answers as Foundation's
/// `removingPercentEncoding`, which the service's query parser used before: the same text, and
/// `nil` for the same malformed or non-UTF-8 input.
@Suite("Percent decoding")
struct PercentDecodingTests {
    private static let cases = [
        "", "plain", "a+b", "%41%62c", "%e2%9c%93", "%E2%9C%93", "http%3A%2F%2Fexample.com%2Fa.jpg%3Fn%3D1",
        "%", "%4", "%4g", "abc%", "%%41", "%ff", "%c3", "%00", "%2B%20", "caf%C3%A9", "ü%C3%BC",
    ]

    @Test(arguments: cases)
    func agreesWithFoundation(_ text: String) {
        #expect(Hex.percentDecodedString(text) == text.removingPercentEncoding)
        #expect(Hex.percentDecodedString(Substring(text)) == text.removingPercentEncoding)
    }

    @Test func decodesBytesAndRefusesMalformedEscapes() {
        #expect(Hex.percentDecoded("%00%ffA") == [0, 0xff, 0x41])
        #expect(Hex.percentDecoded("x%") == nil)
        #expect(Hex.percentDecoded("x%1") == nil)
        #expect(Hex.percentDecoded("x%1z") == nil)
    }
}
