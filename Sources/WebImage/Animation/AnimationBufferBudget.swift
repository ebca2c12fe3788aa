#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AnimatedImagePlayer {
    /// The default byte budget of an animation's frame buffer, sized as SDWebImage sizes
    /// `SDAnimatedImagePlayer.maxBufferSize` when none is set: the smaller of a fifth of the memory
    /// and 60% of what is free, where the memory is the control group's limit when the process has
    /// one (``CgroupMemory``) and the machine's otherwise; then no more than all frames take, no
    /// more than ``maxDefaultBytes``, and never less than one frame.
    public enum BufferBudget {
        /// The most a default budget takes: enough to buffer a second or more of most animations,
        /// while a cache holding many animations (it counts each one's budget) stays bounded. With
        /// the decoder's canvas and the compressed data beside it, a 1080p animation plays within
        /// 64 MiB of a 1x1 decode's memory: a 300-frame GIF's peak RSS grew by 75-82 MiB with 64 MiB
        /// here, which buffered 8 frames (`Benchmarks/scripts/animation-playback.sh`).
        public static let maxDefaultBytes = 40 << 20

        /// The default budget for frames of `frameBytes` each, `frameCount` of them.
        public static func defaultBytes(frameBytes: Int, frameCount: Int) -> Int {
            let frame = max(1, frameBytes)
            let all = frame.multipliedReportingOverflow(by: max(1, frameCount))
            let (total, free) = memory()
            let fromMemory = min(total / 5, free / 10 * 6)
            let budget = min(all.overflow ? .max : all.partialValue, fromMemory, maxDefaultBytes)
            return max(frame, budget / frame * frame)
        }

        /// Total and free memory in bytes: the control group's limit and what its working set leaves,
        /// else the machine's memory and `MemAvailable`.
        private static func memory() -> (total: Int, free: Int) {
            if let reading = CgroupMemory.current.reading() {
                return (reading.limit, max(0, reading.limit - reading.workingSet))
            }
            let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
            var available = physical
            if let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
               let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) {
                available = kilobytes.multipliedReportingOverflow(by: 1024).overflow ? physical : kilobytes * 1024
            }
            return (physical, available)
        }
    }
}

/// The name this had before it was grouped under ``AnimatedImagePlayer``.
package typealias AnimationBufferBudget = AnimatedImagePlayer.BufferBudget
