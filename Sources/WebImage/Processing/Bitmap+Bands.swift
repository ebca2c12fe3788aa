import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Bitmap {
    /// Whether there is a second core to render a band on. Read once: `activeProcessorCount`
    /// reads the scheduler's CPU set and cgroup files on every call, and decoders ask per image.
    static let hasSecondCore = ProcessInfo.processInfo.activeProcessorCount > 1

    /// A bitmap assembled from `bandCount` bands of whole rows, top to bottom, rendered at the
    /// same time on as many threads. `render(band)` returns that band's rows, tightly packed RGBA;
    /// rows a band leaves out (none, when the bands cover the height) are zero.
    ///
    /// Each band is its own array, handed back under a lock, so the threads share no mutable
    /// memory; copying the bands into place costs far less than rendering them.
    static func assembled(width: Int, height: Int, bandCount: Int,
                          render: @Sendable (Int) -> [UInt8]) throws -> Bitmap {
        let rendered = Locked<[Int: [UInt8]]>([:])
        DispatchQueue.concurrentPerform(iterations: bandCount) { band in
            let rows = render(band)
            rendered.withLock { $0[band] = rows }
        }
        let bands = rendered.withLock { $0 }
        return try Bitmap(width: width, height: height) { target in
            var offset = 0
            for band in 0..<bandCount {
                guard let rows = bands[band], offset + rows.count <= target.count else { break }
                rows.withUnsafeBytes { target.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset += rows.count
            }
            if offset < target.count {
                (target.baseAddress! + offset).initializeMemory(as: UInt8.self, repeating: 0, count: target.count - offset)
            }
        }
    }
}
