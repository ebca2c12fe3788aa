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
            case .gif: size = bytes.count >= 10 ? (Self.littleEndian16(bytes, 6), Self.littleEndian16(bytes, 8)) : nil
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
            guard (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) else { continue }
            guard segment.payload.count >= 5 else { return nil }
            let sof = segment.payload.lowerBound
            return (Int(bytes[sof + 3]) << 8 | Int(bytes[sof + 4]), Int(bytes[sof + 1]) << 8 | Int(bytes[sof + 2]))
        }
        return nil
    }

    /// The canvas of an extended WebP (`VP8X`), or the frame size of a simple lossy or lossless one.
    private static func webPSize(_ bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard bytes.count >= 25 else { return nil }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8X":
            guard bytes.count >= 30 else { return nil }
            let width = Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16
            let height = Int(bytes[27]) | Int(bytes[28]) << 8 | Int(bytes[29]) << 16
            return (width + 1, height + 1)
        case "VP8L":
            // Signature byte 0x2F, then 14 bits of width − 1 and 14 bits of height − 1.
            let bits = Int(bytes[21]) | Int(bytes[22]) << 8 | Int(bytes[23]) << 16 | Int(bytes[24]) << 24
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8 ":
            // The key frame's start code 9D 01 2A, then 14-bit width and height (2 bits of scale each).
            guard bytes.count >= 30, bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A else { return nil }
            return (littleEndian16(bytes, 26) & 0x3FFF, littleEndian16(bytes, 28) & 0x3FFF)
        default:
            return nil
        }
    }

    /// IHDR's sides (the first chunk's first eight bytes) are at most 2³¹ − 1: a side with the top
    /// bit set is no size (PNG forbids it; libspng refuses the file).
    private static func pngSize(_ bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard bytes[16] & 0x80 == 0, bytes[20] & 0x80 == 0 else { return nil }
        return (bigEndian32(bytes, 16), bigEndian32(bytes, 20))
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    private static func littleEndian16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }
}
