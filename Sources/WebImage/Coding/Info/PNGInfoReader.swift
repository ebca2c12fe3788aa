#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for a PNG or APNG, from the chunks before the image data (``PNGChunkWalker``;
/// nothing is inflated but an `iCCP` profile): `IHDR`'s size and colour type, `tRNS`, `acTL`'s
/// frame count, `eXIf`'s orientation, and `iCCP` (``PNGColorProfile/embeddedProfile(of:)``).
/// Chunks after the first `IDAT` are not read (Pillow reads them only on a full load), so a
/// header alone, or a file cut short in its image data, answers.
enum PNGInfoReader {
    static func read(_ data: Data) throws -> ImageInfo {
        let header = try data.withUnsafeBytes { bytes throws -> (colorType: UInt8, hasTransparency: Bool, frames: Int, exif: Range<Int>?) in
            var walker = PNGChunkWalker(bytes)
            guard let first = walker.next() else { throw WebImageError.truncatedData("PNG: the data ends before IHDR") }
            guard first.type == "IHDR" else { throw WebImageError.corruptData("PNG: the first chunk is \(first.type), not IHDR") }
            guard first.isComplete else { throw WebImageError.truncatedData("PNG: the data ends inside IHDR") }
            guard first.body.count == 13 else { throw WebImageError.corruptData("PNG: IHDR of \(first.body.count) bytes") }
            var hasTransparency = false, frames = 1
            var exif: Range<Int>?
            while let chunk = walker.next(), chunk.type != "IDAT", chunk.isComplete {
                switch chunk.type {
                case "tRNS": hasTransparency = true
                case "eXIf": exif = exif ?? chunk.body
                case "acTL" where chunk.body.count == 8:
                    // Pillow's rule: 0 frames, or more than 2³¹, is no animation.
                    if let count = bytes.bigEndianUInt32(at: chunk.body.lowerBound).map(Int.init),
                       (1...Int(Int32.max)).contains(count) { frames = count }
                default: break
                }
            }
            return (bytes[first.body.lowerBound + 9], hasTransparency, frames, exif)
        }
        guard let size = FormatDetection.declaredSize(of: data) else {
            throw WebImageError.corruptData("PNG: IHDR declares an empty or oversized side")
        }
        let orientation = header.exif.flatMap { EXIFReader.orientation(inTIFF: data[data.startIndex + $0.lowerBound..<data.startIndex + $0.upperBound]) }
        let profile = PNGColorProfile.embeddedProfile(of: data)
        return ImageInfo(format: .png, width: size.width, height: size.height, frames: header.frames,
                         orientation: orientation ?? .up,
                         hasAlpha: header.colorType == 4 || header.colorType == 6 || header.hasTransparency,
                         bytes: data.count, colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
    }
}
