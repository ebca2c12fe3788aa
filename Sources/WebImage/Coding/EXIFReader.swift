#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the orientation tag (0x0112) from EXIF metadata.
///
/// Bounds-checked throughout: EXIF comes from the network and is the classic place for hostile
/// offsets. Anything malformed reads as "no orientation".
package enum EXIFReader {
    /// The orientation in a TIFF-structured EXIF blob (as in a JPEG APP1 segment after
    /// `Exif\0\0`, a PNG `eXIf` chunk or a WebP `EXIF` chunk). A leading `Exif\0\0` is skipped.
    package static func orientation(inTIFF data: Data) -> ImageOrientation? {
        data.withUnsafeBytes { bytes in
            var start = 0
            if bytes.count >= 6, Array(bytes[0..<6]) == Array("Exif\0\0".utf8) { start = 6 }
            return orientation(tiff: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        }
    }

    /// The orientation of a JPEG: from its EXIF (APP1) segment, or else from the `tiff:Orientation`
    /// property of its XMP packet (as Pillow and Apple's ImageIO read it).
    package static func orientation(inJPEG data: Data) -> ImageOrientation? {
        data.withUnsafeBytes { bytes in
            if let segment = exifSegment(inJPEG: bytes), let found = orientation(tiff: segment) { return found }
            return xmpSegment(inJPEG: bytes).flatMap(orientation(xmp:))
        }
    }

    /// The orientation in an XMP packet: `tiff:Orientation="N"` or `<tiff:Orientation>N</tiff:Orientation>`.
    package static func orientation(inXMP data: Data) -> ImageOrientation? {
        data.withUnsafeBytes { orientation(xmp: $0) }
    }

    private static func orientation(xmp: UnsafeRawBufferPointer) -> ImageOrientation? {
        let name = Array("tiff:Orientation".utf8)
        guard xmp.count > name.count + 2 else { return nil }
        var index = 0
        while index + name.count + 2 < xmp.count {
            if xmp[index] == name[0], Array(xmp[index..<index + name.count]) == name {
                var cursor = index + name.count
                // Skip `="`, `>` or white space before the digit.
                while cursor < xmp.count, cursor < index + name.count + 4,
                      [UInt8(ascii: "="), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: ">"), UInt8(ascii: " ")].contains(xmp[cursor]) {
                    cursor += 1
                }
                if cursor < xmp.count, (UInt8(ascii: "1")...UInt8(ascii: "8")).contains(xmp[cursor]) {
                    return ImageOrientation(rawValue: Int(xmp[cursor] - UInt8(ascii: "0")))
                }
            }
            index += 1
        }
        return nil
    }

    /// The TIFF part of the first APP1 `Exif` segment before the first scan.
    static func exifSegment(inJPEG bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        app1Segment(inJPEG: bytes, signature: Array("Exif\0\0".utf8))
    }

    /// The first APP1 XMP packet.
    static func xmpSegment(inJPEG bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        app1Segment(inJPEG: bytes, signature: Array("http://ns.adobe.com/xap/1.0/\0".utf8))
    }

    /// The body (after `signature`) of the first APP1 segment that starts with `signature`.
    private static func app1Segment(inJPEG bytes: UnsafeRawBufferPointer, signature: [UInt8]) -> UnsafeRawBufferPointer? {
        JPEGMarkerWalker.payloads(of: JPEGMarkerWalker.Marker.app1, signature: signature, in: bytes).first
    }

    private static func orientation(tiff: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        func u16(_ at: Int) -> Int? { tiff.uint16(at: at, bigEndian: bigEndian).map(Int.init) }
        func u32(_ at: Int) -> Int? { tiff.uint32(at: at, bigEndian: bigEndian).map(Int.init) }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for index in 0..<min(count, 1024) {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            guard u16(entry + 2) == 3, let value = u16(entry + 8), (1...8).contains(value) else { return nil }
            return ImageOrientation(rawValue: value)
        }
        return nil
    }
}
