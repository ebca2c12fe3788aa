/// Hexadecimal text of bytes, both ways: digests, signatures and file names in lowercase,
/// colours and percent-escapes in uppercase, colours, keys and percent-escapes read in either
/// case. The one hex digit table of the package.
package enum Hex {
    private static let lowercaseDigits = Array("0123456789abcdef".utf8)
    private static let uppercaseDigits = Array("0123456789ABCDEF".utf8)

    /// Two lowercase hex digits per byte, in order.
    package static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encoded(bytes, digits: lowercaseDigits)
    }

    /// Two uppercase hex digits per byte, in order.
    package static func uppercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encoded(bytes, digits: uppercaseDigits)
    }

    private static func encoded<Bytes: Sequence>(_ bytes: Bytes, digits: [UInt8]) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hex digit (`0-9`, `a-f`, `A-F`), else `nil`.
    package static func digitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether `byte` is one of the digits ``lowercase(_:)`` writes (`0-9`, `a-f`).
    package static func isLowercaseDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// The bytes of hex text (two digits a byte, either case: `bg`'s colours, imgproxy's keys and
    /// salts), `nil` for an odd length or any other character.
    package static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = digitValue(digits[index]), let low = digitValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// `byte` percent-encoded: `%` and two uppercase hex digits (`%2F`), as RFC 3986 recommends
    /// and S3's signatures and thumbor's loader expect.
    package static func percentEncoded(_ byte: UInt8) -> String {
        String(decoding: [UInt8(ascii: "%"), uppercaseDigits[Int(byte >> 4)], uppercaseDigits[Int(byte & 0x0f)]], as: UTF8.self)
    }

    /// The bytes `text` percent-encodes (`%` and two hex digits for a byte, every other byte as
    /// itself; `+` stays `+`), or `nil` for a `%` not followed by two hex digits. The one
    /// percent-decoder: data URLs, `local:` and S3 paths, the service's query.
    package static func percentDecoded<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(digitValue), let low = bytes.next().flatMap(digitValue) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    /// ``percentDecoded(_:)`` as text, or `nil` when it is malformed or not UTF-8 (as
    /// Foundation's `removingPercentEncoding`, without its round trip through `CFString`).
    package static func percentDecodedString<Text: StringProtocol>(_ text: Text) -> String? {
        guard !text.utf8.contains(UInt8(ascii: "%")) else {
            return percentDecoded(text).flatMap { String(validating: $0, as: UTF8.self) }
        }
        return String(text)
    }
}
