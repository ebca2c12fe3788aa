#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// URL-safe base64 (RFC 4648 §5: `-` and `_` for `+` and `/`), as imgproxy's and thumbor's URLs
/// carry signatures and sources: Foundation's codec with the alphabet swapped, one place for both dialects.
enum Base64URL {
    /// `bytes` in URL-safe base64, with `=` padding when `padded` (thumbor's hashes keep it; imgproxy's drop it).
    static func encoded(_ bytes: some Sequence<UInt8>, padded: Bool) -> String {
        var text = Data(bytes).base64EncodedString()
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        if !padded { while text.hasSuffix("=") { text.removeLast() } }
        return text
    }

    /// The bytes of URL-safe base64 text, padded or not; `nil` for any other character or a
    /// length no encoding makes. Standard-alphabet `+` and `/` are refused: they are not URL-safe.
    static func decoded(_ text: Substring) -> Data? {
        var standard = ""
        standard.reserveCapacity(text.utf8.count + 3)
        for character in text.unicodeScalars {
            switch character {
            case "-": standard.append("+")
            case "_": standard.append("/")
            case "+", "/": return nil
            default: standard.unicodeScalars.append(character)
            }
        }
        while standard.hasSuffix("=") { standard.removeLast() }
        guard standard.utf8.count % 4 != 1 else { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard)
    }
}
