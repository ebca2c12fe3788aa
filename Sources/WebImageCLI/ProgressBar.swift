#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Draws a prefetch's progress on one terminal line: items, bytes, rate and time left.
struct ProgressBar {
    let width: Int
    let start = ContinuousClock.now

    init(width: Int = 30) { self.width = width }

    /// The line for `progress` (without a line ending).
    func render(_ progress: PrefetchProgress) -> String {
        let elapsed = (ContinuousClock.now - start).milliseconds / 1000
        let filled = Int((progress.fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let rate = elapsed > 0 ? Double(progress.completed) / elapsed : 0
        let remaining = progress.total - progress.completed
        let eta = rate > 0 ? Self.duration(Double(remaining) / rate) : "--"
        var line = "[\(bar)] \(progress.completed)/\(progress.total)"
        if progress.failed > 0 { line += " (\(progress.failed) failed)" }
        line += "  " + Self.bytes(progress.downloadedBytes) + "  \(rate.fixed(1)) img/s" + "  ETA " + eta
        return line
    }

    static func bytes(_ count: Int64) -> String {
        let value = Double(count)
        if value >= 1_073_741_824 { return (value / 1_073_741_824).fixed(2) + " GB" }
        if value >= 1_048_576 { return (value / 1_048_576).fixed(1) + " MB" }
        if value >= 1024 { return (value / 1024).fixed(1) + " KB" }
        return "\(count) B"
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return whole >= 60 ? "\(whole / 60)m\(String(whole % 60).leftPadded(to: 2, with: "0"))s" : "\(whole)s"
    }
}
