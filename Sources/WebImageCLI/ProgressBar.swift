import Foundation
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
        line += "  " + Self.bytes(progress.downloadedBytes) + String(format: "  %.1f img/s", rate) + "  ETA " + eta
        return line
    }

    static func bytes(_ count: Int64) -> String {
        let value = Double(count)
        if value >= 1_073_741_824 { return String(format: "%.2f GB", value / 1_073_741_824) }
        if value >= 1_048_576 { return String(format: "%.1f MB", value / 1_048_576) }
        if value >= 1024 { return String(format: "%.1f KB", value / 1024) }
        return "\(count) B"
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return whole >= 60 ? "\(whole / 60)m\(String(format: "%02d", whole % 60))s" : "\(whole)s"
    }
}
