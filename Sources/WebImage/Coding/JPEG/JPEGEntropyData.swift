#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A scan's entropy-coded bytes with byte stuffing removed, and where each restart interval
/// begins: the input of ``JPEGBitReader``.
struct JPEGEntropyData: Sendable {
    /// Zero bytes after the data, so that reading 8 bytes anywhere within a block's reach past the
    /// end stays in bounds: one block consumes at most 27 + 63 × 26 bits, a skip step past its
    /// end takes at most 21 more before it steps back (``JPEGBitReader/skipAC(_:)``), and the
    /// decoder checks the position after every block.
    static let padding = 256
    /// The data, then `padding` zero bytes. A ``PixelBuffer``, so a thumbnail server decoding one
    /// large photo after another reuses the memory instead of faulting in megabytes each time.
    let bytes: PixelBuffer
    /// Bytes of data, without the padding.
    let count: Int
    /// Offsets into `bytes` where the data after each restart marker starts.
    let restartOffsets: [Int]

    /// The data of the scan that starts at `start`, or `nil` when its restart markers are out of
    /// sequence (libjpeg resynchronizes on those in its own way), fill bytes stand inside it, or a
    /// marker other than EOI ends it: libjpeg reads every segment up to EOI and may fail on one, so such files are left to it
    /// (a thumbnail must fail exactly when the full decode does).
    init?(_ source: UnsafeRawBufferPointer, from start: Int) {
        guard start <= source.count, let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var restarts: [Int] = []
        var isPlainScan = true // restarts in order, and EOI (or the end of the data) after the scan
        var written = 0
        let buffer = try? PixelBuffer(scratchCount: source.count - start + Self.padding) { buffer in
            let target = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var read = start
            scan: while read < source.count {
                // Copy up to the next 0xFF in one go.
                let remaining = source.count - read
                let found = memchr(base + read, 0xFF, remaining)
                let runLength = found.map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - (base + read) } ?? remaining
                (target + written).initialize(from: base + read, count: runLength)
                written += runLength
                read += runLength
                guard read < source.count else { break }
                guard let next = JPEGMarkerWalker.markerCode(afterFillAt: read, in: source) else { break }
                // Fill bytes (FF FF ...) inside a scan: libjpeg-turbo's fast Huffman path reads the
                // second FF as a marker, decodes the MCU from zeros, then decodes it again on its
                // slow path, which reads `FF ... FF 00` as one FF byte, into blocks still holding
                // the first attempt's coefficients: pixels no clean decode gives. The standard
                // allows fill bytes only before markers and encoders write none inside a scan,
                // so such files are left to libjpeg-turbo (found by JPEGEighthScaleFuzzer).
                guard next == read + 1 else {
                    isPlainScan = false
                    break scan
                }
                switch base[next] {
                case 0x00:
                    target[written] = 0xFF
                    written += 1
                case 0xD0...0xD7:
                    guard Int(base[next] - 0xD0) == restarts.count % 8 else {
                        isPlainScan = false
                        break scan
                    }
                    restarts.append(written)
                case 0xD9:
                    break scan
                default:
                    isPlainScan = false
                    break scan
                }
                read = next + 1
            }
            (target + written).initialize(repeating: 0, count: Self.padding)
        }
        guard let buffer, isPlainScan else { return nil }
        bytes = buffer
        count = written
        restartOffsets = restarts
    }
}
