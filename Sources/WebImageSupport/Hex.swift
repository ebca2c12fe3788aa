/// Lowercase hexadecimal text of bytes: digests, signatures, file names.
package enum Hex {
    /// Two lowercase hex digits per byte, in order.
    package static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
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
