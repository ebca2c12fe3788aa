#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ICC profile a GIF may carry in an `ICCRGBG1` application extension (ICC's registered
/// identifier "ICCRGBG1" with authentication code "012", the profile in its data sub-blocks), as
/// ImageMagick and Photoshop write it. It applies to every frame.
enum GIFICCProfile {
    private static let identifier = Array("ICCRGBG1012".utf8)

    /// The profile, or `nil` when the file has none (or is cut short before it ends). Walks the
    /// file's blocks by their lengths only; no pixel is decoded.
    static func read(_ data: Data) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count >= 13 else { return nil }
            var offset = 13
            let screenFlags = bytes[10]
            if screenFlags & 0x80 != 0 { offset += 3 << (Int(screenFlags & 0x07) + 1) }
            /// The offset after the sub-blocks starting at `start`, and their data when `collecting`.
            func subBlocks(from start: Int, collecting: Bool) -> (end: Int, data: [UInt8])? {
                var position = start
                var collected: [UInt8] = []
                while position < bytes.count {
                    let length = Int(bytes[position])
                    position += 1
                    if length == 0 { return (position, collected) }
                    guard position + length <= bytes.count else { return nil }
                    if collecting {
                        guard collected.count + length <= ICCTransformCache.maximumProfileSize else { return nil }
                        collected.append(contentsOf: bytes[position..<position + length])
                    }
                    position += length
                }
                return nil
            }
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x21: // extension: label, then sub-blocks
                    guard offset + 2 < bytes.count else { return nil }
                    let first = offset + 2
                    if bytes[offset + 1] == 0xFF, first + 12 <= bytes.count, bytes[first] == 11,
                       bytes[first + 1..<first + 12].elementsEqual(identifier) {
                        guard let profile = subBlocks(from: first + 12, collecting: true)?.data, !profile.isEmpty else { return nil }
                        return Data(profile)
                    }
                    guard let next = subBlocks(from: first, collecting: false) else { return nil }
                    offset = next.end
                case 0x2C: // image: descriptor, local palette, LZW code size, data sub-blocks
                    guard offset + 10 < bytes.count else { return nil }
                    let flags = bytes[offset + 9]
                    var next = offset + 10
                    if flags & 0x80 != 0 { next += 3 << (Int(flags & 0x07) + 1) }
                    guard let after = subBlocks(from: next + 1, collecting: false) else { return nil }
                    offset = after.end
                default: // trailer, or bytes that are no block
                    return nil
                }
            }
            return nil
        }
    }
}
