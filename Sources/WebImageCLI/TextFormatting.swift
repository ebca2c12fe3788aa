#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The CLI's number, column and JSON output without `String(format:)` and `JSONSerialization`:
// those live in the full Foundation, whose startup and size (ICU included) the CLI does not pay.

extension Double {
    /// The value with exactly `decimals` digits after the point, rounded half away from zero.
    func fixed(_ decimals: Int) -> String {
        var scale = 1
        for _ in 0..<max(decimals, 0) { scale *= 10 }
        let scaled = (abs(self) * Double(scale)).rounded()
        guard isFinite, scaled < 9e18 else { return String(self) }
        let units = Int(scaled)
        let sign = self < 0 && units != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(units) }
        let fraction = String(units % scale)
        return sign + String(units / scale) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}

extension String {
    /// Exactly `width` characters: cut, or padded with spaces on the right.
    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: " ", count: width - count)
    }

    /// At least `width` characters, padded with `pad` on the left (a right-aligned column).
    func leftPadded(to width: Int, with pad: Character = " ") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

/// Whether standard error is a terminal (where a progress line can redraw in place).
func standardErrorIsTerminal() -> Bool { isatty(2) == 1 }

/// Writes `text` to standard error, unbuffered (progress lines redraw in place).
func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

/// JSON text for the CLI's `--json` output: objects (keys sorted), arrays, strings, integers,
/// doubles and booleans.
enum JSONText {
    static func render(_ value: Any) -> String {
        switch value {
        case let object as [String: Any]:
            return "{" + object.keys.sorted().map { quoted($0) + ":" + render(object[$0]!) }.joined(separator: ",") + "}"
        case let array as [Any]:
            return "[" + array.map(render).joined(separator: ",") + "]"
        case let string as String:
            return quoted(string)
        case let flag as Bool:
            return flag ? "true" : "false"
        case let integer as Int:
            return String(integer)
        case let integer as Int64:
            return String(integer)
        case let number as Double:
            return number.isFinite ? String(number) : "null"
        default:
            return "null"
        }
    }

    private static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4, with: "0")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
