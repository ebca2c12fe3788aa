import CAVIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for an AVIF, from libavif's `avifDecoderParse`, which reads the boxes and the
/// sequence header but decodes no AV1 frame: the stored size (before `clap`, as Pillow reports
/// it), the image count of a sequence, whether an alpha plane is present, `irot`/`imir` as an
/// orientation (``AVIFCoder/orientation(_:)``) and the `colr` ICC profile.
enum AVIFInfoReader {
    static func read(_ data: Data) throws -> ImageInfo {
        let decoder = try AVIFCoder.makeDecoder(DecodeOptions())
        defer { avifDecoderDestroy(decoder) }
        return try data.withUnsafeBytes { bytes throws -> ImageInfo in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            try AVIFCoder.check(avifDecoderSetIOMemory(decoder, base, bytes.count), "reading")
            try AVIFCoder.check(avifDecoderParse(decoder), "header")
            guard let image = decoder.pointee.image?.pointee else { throw WebImageError.corruptData("AVIF: no image") }
            let profile = image.icc.data.flatMap { image.icc.size > 0 ? Data(bytes: $0, count: image.icc.size) : nil }
            return ImageInfo(format: .avif, width: Int(image.width), height: Int(image.height),
                             frames: max(1, Int(decoder.pointee.imageCount)), orientation: AVIFCoder.orientation(image),
                             hasAlpha: decoder.pointee.alphaPresent != AVIF_FALSE, bytes: bytes.count,
                             colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
        }
    }
}
