#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image file format, as recognized from the first bytes of the data.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, Codable {
    case jpeg, png, gif, webp, heic, avif, jxl, unknown

    /// The usual file extension, without a dot (`nil` for ``unknown``).
    public var fileExtension: String? {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        case .heic: "heic"
        case .avif: "avif"
        case .jxl: "jxl"
        case .unknown: nil
        }
    }

    /// The MIME type (`nil` for ``unknown``).
    public var mimeType: String? {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .heic: "image/heic"
        case .avif: "image/avif"
        case .jxl: "image/jxl"
        case .unknown: nil
        }
    }

    /// The format whose MIME type or file extension is `name` (case-insensitive), if any.
    public init?(mimeTypeOrExtension name: String) {
        let lower = name.lowercased().split(separator: ";").first.map(String.init) ?? ""
        let trimmed = lower.trimmingSpacesAndTabs
        let found = ImageFormat.allCases.first {
            $0.mimeType == trimmed || $0.fileExtension == trimmed
        } ?? (trimmed == "jpeg" || trimmed == "image/jpg" ? .jpeg : nil)
        guard let found else { return nil }
        self = found
    }

    /// The format of `data`, from its first bytes.
    public static func detect(_ data: Data) -> ImageFormat {
        FormatDetection(data).format
    }
}

/// What the first bytes of a file say: the format and, where the container tells, whether it is
/// animated and whether it is lossless.
package struct FormatDetection: Sendable, Hashable {
    /// The format, or ``ImageFormat/unknown``.
    package var format: ImageFormat
    /// Animated PNG (an `acTL` chunk before the image data), animated WebP, a GIF (which may be), or
    /// an image sequence (`ftyp` major brand `avis` or `msf1`).
    package var isAnimated: Bool
    /// `true` for lossless WebP (VP8L), `false` for lossy WebP (VP8), `nil` where it does not apply.
    package var isLossless: Bool?

    /// Reads the signature (and, for PNG and WebP, the leading chunks) of `data`.
    package init(_ data: Data) {
        self = data.withUnsafeBytes { FormatDetection(bytes: $0) }
    }

    private init(format: ImageFormat, isAnimated: Bool = false, isLossless: Bool? = nil) {
        self.format = format
        self.isAnimated = isAnimated
        self.isLossless = isLossless
    }

    private init(bytes: UnsafeRawBufferPointer) {
        func matches(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + signature.count else { return false }
            for (index, byte) in signature.enumerated() where bytes[offset + index] != byte { return false }
            return true
        }
        func fourCC(at offset: Int) -> String? {
            guard bytes.count >= offset + 4 else { return nil }
            return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
        }
        if matches([0xFF, 0xD8, 0xFF]) {
            self.init(format: .jpeg)
        } else if matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self.init(format: .png, isAnimated: FormatDetection.pngHasAnimationControl(bytes))
        } else if matches(Array("GIF87a".utf8)) || matches(Array("GIF89a".utf8)) {
            self.init(format: .gif, isAnimated: true)
        } else if matches(Array("RIFF".utf8)), matches(Array("WEBP".utf8), at: 8) {
            let (animated, lossless) = FormatDetection.webPKind(bytes)
            self.init(format: .webp, isAnimated: animated, isLossless: lossless)
        } else if fourCC(at: 4) == "ftyp", let major = fourCC(at: 8) {
            self.init(format: FormatDetection.isobmffFormat(bytes, majorBrand: major),
                      isAnimated: major == "avis" || major == "msf1")
        } else if matches([0xFF, 0x0A]) || matches([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            // A bare JPEG XL codestream, or the ISOBMFF-style container's `JXL ` signature box.
            self.init(format: .jxl)
        } else {
            self.init(format: .unknown)
        }
    }

    /// Walks PNG chunks until `IDAT`: an `acTL` before it makes the file an APNG.
    private static func pngHasAnimationControl(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for chunk in PNGChunkWalker(bytes) {
            if chunk.type == "acTL" { return true }
            if chunk.type == "IDAT" { return false }
        }
        return false
    }

    /// Reads the first WebP chunk (and for VP8X its flags and following chunks).
    private static func webPKind(_ bytes: UnsafeRawBufferPointer) -> (animated: Bool, lossless: Bool?) {
        guard bytes.count >= 16 else { return (false, nil) }
        let first = String(decoding: bytes[12..<16], as: UTF8.self)
        switch first {
        case "VP8 ": return (false, false)
        case "VP8L": return (false, true)
        case "VP8X":
            guard bytes.count >= 21 else { return (false, nil) }
            let animated = bytes[20] & 0x02 != 0
            // The image chunk follows the optional ICCP/ANIM/ALPH chunks: walk to it.
            var offset = 12
            while offset + 8 <= bytes.count {
                let type = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
                if type == "VP8L" { return (animated, true) }
                if type == "VP8 " { return (animated, false) }
                if type == "ANMF" { offset += 8 + 16; continue } // look inside the first frame
                guard let size = bytes.littleEndianUInt32(at: offset + 4).map(Int.init) else { break }
                let (next, overflow) = offset.addingReportingOverflow(8 + size + (size & 1))
                guard !overflow, next > offset else { break }
                offset = next
            }
            return (animated, nil)
        default: return (false, nil)
        }
    }

    /// AVIF or HEIC from the `ftyp` box's major and compatible brands.
    private static func isobmffFormat(_ bytes: UnsafeRawBufferPointer, majorBrand: String) -> ImageFormat {
        let boxSize = min(bytes.bigEndianUInt32(at: 0).map(Int.init) ?? 0, bytes.count)
        var brands = [majorBrand]
        var offset = 16
        while offset + 4 <= boxSize {
            brands.append(String(decoding: bytes[offset..<offset + 4], as: UTF8.self))
            offset += 4
        }
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
        let heif: Set = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]
        return brands.contains(where: heif.contains) ? .heic : .unknown
    }
}
