#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an encoded image says about itself, read from its header and metadata without decoding
/// its pixels.
///
/// JPEG, PNG, GIF and WebP are read from their markers, chunks and blocks by lengths only (no
/// entropy-coded, deflated or LZW data is touched); AVIF, HEIC and JPEG XL through their
/// libraries' header APIs (libavif's parse, libheif's image handles, libjxl's basic-info and
/// colour events), which read boxes and headers but decode no frame. The cost is bounded by the
/// file's size and no bitmap is allocated, so a 20000×20000 header is answered at once.
///
/// ```swift
/// let info = try ImageInfo.read(from: data)
/// print(info.format, info.width, info.height, info.frames) // jpeg 4032 3024 1
/// ```
public struct ImageInfo: Sendable, Hashable, Codable {
    /// The format, sniffed from the first bytes as ``ImageFormat/detect(_:)`` does.
    public var format: ImageFormat
    /// The width in pixels as stored, before ``orientation`` is applied: the canvas of an
    /// animation. HEIC, whose `irot`/`imir`/`clap` libheif makes part of the image, reports the
    /// size it decodes to (and ``ImageOrientation/up``), as ``DecodedImage`` does.
    public var width: Int
    /// The height in pixels as stored, before ``orientation`` is applied.
    public var height: Int
    /// 1 for a still image; for an animation, its frame count: GIF image descriptors (counted by
    /// walking blocks, no LZW decoded), APNG's `acTL`, animated WebP's `ANMF` frames, an AVIF
    /// image sequence's images, a JPEG XL animation's displayed frames.
    public var frames: Int
    /// The EXIF orientation: JPEG's APP1 (or XMP), PNG's `eXIf`, WebP's `EXIF` chunk, AVIF's
    /// `irot`/`imir`, JPEG XL's codestream; ``ImageOrientation/up`` when none is given.
    public var orientation: ImageOrientation
    /// Whether the header declares transparency: a PNG colour type with alpha or a `tRNS` chunk,
    /// WebP's alpha flag (VP8X) or VP8L's alpha hint, a transparent index in the GIF's first
    /// graphic control extension, an alpha plane or channel in AVIF, HEIC and JPEG XL. Declared,
    /// not measured: an alpha channel whose every pixel is opaque still counts.
    public var hasAlpha: Bool
    /// The size of the encoded data in bytes.
    public var bytes: Int
    /// The description of the ICC profile embedded in the file (JPEG APP2, PNG `iCCP`, WebP
    /// `ICCP`, GIF `ICCRGBG1`, AVIF and HEIC `colr`, JPEG XL's ICC colour encoding), e.g.
    /// "Display P3"; `""` for an embedded profile without a description; `nil` when the file
    /// embeds none, or bytes Little CMS cannot parse as a profile (colours given only by `nclx`,
    /// `gAMA`/`cHRM` or JPEG XL's structured encoding are no embedded profile).
    public var colorProfile: String?

    /// Creates an info value; ``read(from:)`` is how one is read from a file.
    public init(format: ImageFormat, width: Int, height: Int, frames: Int = 1, orientation: ImageOrientation = .up,
                hasAlpha: Bool = false, bytes: Int, colorProfile: String? = nil) {
        self.format = format
        self.width = width
        self.height = height
        self.frames = frames
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.bytes = bytes
        self.colorProfile = colorProfile
    }

    /// The largest side accepted, 2³¹ − 1 pixels (PNG's own limit; JPEG and GIF stop at 65535,
    /// WebP at 16384, JPEG XL at 2³⁰): a larger one is a corrupt header.
    public static let maximumSide = Int(Int32.max)

    /// Reads what `data` says about itself from its header and metadata, decoding no pixels.
    ///
    /// - Throws: ``WebImageError/emptyData`` for no bytes; ``WebImageError/unsupportedFormat(_:)``
    ///   for bytes of no known format (or a codec library that cannot be opened);
    ///   ``WebImageError/truncatedData(_:)`` when the data ends before the header does;
    ///   ``WebImageError/corruptData(_:)`` for a malformed header, or a width or height of 0 or
    ///   above ``maximumSide``.
    public static func read(from data: Data) throws(WebImageError) -> ImageInfo {
        guard !data.isEmpty else { throw .emptyData }
        let format = ImageFormat.detect(data)
        let info: ImageInfo
        do {
            switch format {
            case .jpeg: info = try JPEGInfoReader.read(data)
            case .png: info = try PNGInfoReader.read(data)
            case .gif: info = try GIFInfoReader.read(data)
            case .webp: info = try WebPInfoReader.read(data)
            case .avif: info = try AVIFInfoReader.read(data)
            case .heic: info = try HEIFInfoReader.read(data)
            case .jxl: info = try JXLInfoReader.read(data)
            case .unknown: throw WebImageError.unsupportedFormat("no known image format")
            }
        } catch let error as WebImageError {
            throw error
        } catch {
            throw .corruptData("\(format.rawValue): \(error)")
        }
        guard (1...maximumSide).contains(info.width), (1...maximumSide).contains(info.height) else {
            throw .corruptData("\(format.rawValue): declared size \(info.width)×\(info.height)")
        }
        guard info.frames >= 1 else { throw .corruptData("\(format.rawValue): no frames") }
        return info
    }
}
