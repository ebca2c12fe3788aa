#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for a GIF: the logical screen's size (``FormatDetection/declaredSize(of:)``; a
/// zero-sized screen takes its first image's extent, as ``GIFAnimationSource`` does), the image
/// descriptors counted by walking the blocks (``GIFBlockWalker``, no LZW data decompressed), a
/// transparent index in the graphic control extension before the first image (what Pillow
/// reports as the file's `transparency`), and an `ICCRGBG1` profile (``GIFICCProfile``).
enum GIFInfoReader {
    static func read(_ data: Data) throws -> ImageInfo {
        let walk = data.withUnsafeBytes { bytes -> (frames: Int, firstImage: (right: Int, bottom: Int)?, transparent: Bool, truncated: Bool) in
            var walker = GIFBlockWalker(bytes)
            var frames = 0, transparent = false
            var firstImage: (right: Int, bottom: Int)?
            while let block = walker.next() {
                switch block {
                case .extension(0xF9, let chain) where frames == 0:
                    // Graphic control: packed flags, delay, transparent index; bit 0 flags the index.
                    if let control = GIFBlockWalker.subBlocks(in: chain, of: bytes).first, control.count >= 4 {
                        transparent = bytes[control.lowerBound] & 0x01 != 0
                    }
                case .image(let descriptor, _):
                    if frames == 0 {
                        func word(_ at: Int) -> Int { bytes.littleEndianUInt16(at: descriptor + at).map(Int.init) ?? 0 }
                        firstImage = (word(1) + word(5), word(3) + word(7))
                    }
                    frames += 1
                case .extension:
                    continue
                }
            }
            return (frames, firstImage, transparent, walker.isTruncated)
        }
        guard let firstImage = walk.firstImage else {
            throw walk.truncated || data.count < 13 ? WebImageError.truncatedData("GIF: the data ends before the first image")
                : WebImageError.corruptData("GIF: no image")
        }
        let screen = FormatDetection.declaredSize(of: data)
        let size = screen ?? (width: firstImage.right, height: firstImage.bottom)
        let profile = GIFICCProfile.read(data)
        return ImageInfo(format: .gif, width: size.width, height: size.height, frames: walk.frames, orientation: .up,
                         hasAlpha: walk.transparent, bytes: data.count,
                         colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
    }
}
