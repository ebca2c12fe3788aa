#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension FormatDetection {
    /// The canvas size a JPEG, PNG, GIF or WebP header declares, read without decoding anything:
    /// what the service weighs a render by before it takes the memory (`nil` for other formats and
    /// for a header that is missing, truncated or declares an empty side). The decoders read the
    /// same fields and still check them; this is an estimate's input, not a validation.
    package static func declaredSize(of data: Data) -> (width: Int, height: Int)? {
        FormatDetection(data).declaredSize(of: data)
    }

    /// ``declaredSize(of:)-swift.type.method`` for a caller that has detected `data`'s format already.
    package func declaredSize(of data: Data) -> (width: Int, height: Int)? {
        data.withUnsafeBytes { bytes -> (width: Int, height: Int)? in
            let size: (width: Int, height: Int)?
            switch format {
            case .jpeg: size = Self.jpegSize(bytes)
            case .png: size = bytes.count >= 24 ? Self.pngSize(bytes) : nil
            case .gif: size = Self.sides(bytes.littleEndianUInt16(at: 6), bytes.littleEndianUInt16(at: 8))
            case .webp: size = Self.webPSize(bytes)
            default: size = nil
            }
            guard let size, size.width > 0, size.height > 0 else { return nil }
            return size
        }
    }

    /// The first start-of-frame segment's size (SOF0–SOF15 but DHT, JPG and DAC) before the first
    /// scan, found by the one marker walker the decoders use.
    private static func jpegSize(_ bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        for segment in JPEGMarkerWalker(bytes) {
            let marker = segment.marker
            // Start of scan or end of image before any frame header: no size to read.
            if marker == JPEGMarkerWalker.Marker.sos || marker == JPEGMarkerWalker.Marker.eoi { return nil }
            guard JPEGMarkerWalker.Marker.isStartOfFrame(marker) else { continue }
            guard segment.payload.count >= 5 else { return nil }
            let sof = segment.payload.lowerBound
            return sides(bytes.bigEndianUInt16(at: sof + 3), bytes.bigEndianUInt16(at: sof + 1))
        }
        return nil
    }

    /// The canvas of an extended WebP (`VP8X`), or the frame size of a simple lossy or lossless one.
    private static func webPSize(_ bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard bytes.count >= 25 else { return nil }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8X":
            guard let width = bytes.littleEndianUInt24(at: 24), let height = bytes.littleEndianUInt24(at: 27) else { return nil }
            return (Int(width) + 1, Int(height) + 1)
        case "VP8L":
            // Signature byte 0x2F, then 14 bits of width − 1 and 14 bits of height − 1.
            guard let bits = bytes.littleEndianUInt32(at: 21).map(Int.init) else { return nil }
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8 ":
            // The key frame's start code 9D 01 2A, then 14-bit width and height (2 bits of scale each).
            guard bytes.count >= 30, bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A else { return nil }
            return sides(bytes.littleEndianUInt16(at: 26).map { $0 & 0x3FFF }, bytes.littleEndianUInt16(at: 28).map { $0 & 0x3FFF })
        default:
            return nil
        }
    }

    /// IHDR's sides (the first chunk's first eight bytes) are at most 2³¹ − 1: a side with the top
    /// bit set is no size (PNG forbids it; libspng refuses the file).
    private static func pngSize(_ bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard bytes[16] & 0x80 == 0, bytes[20] & 0x80 == 0 else { return nil }
        return sides(bytes.bigEndianUInt32(at: 16), bytes.bigEndianUInt32(at: 20))
    }

    /// A width and height read from the header, or `nil` when either field was cut short.
    private static func sides<Side: FixedWidthInteger & UnsignedInteger>(_ width: Side?, _ height: Side?) -> (width: Int, height: Int)? {
        guard let width, let height, let w = Int(exactly: width), let h = Int(exactly: height) else { return nil }
        return (w, h)
    }
}
