#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The CLI's number and column output without `String(format:)`, which lives in the full
// Foundation, whose startup and size (ICU included) the CLI does not pay. JSON: `JSONOutput`.

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

    /// The value rounded to `places` decimals, for a JSON record's number (`JSONOutput`).
    func rounded(places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<max(places, 0) { scale *= 10 }
        return (self * scale).rounded() / scale
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
