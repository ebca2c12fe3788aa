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
    /// file's blocks by their lengths only (``GIFBlockWalker``); no pixel is decoded.
    static func read(_ data: Data) -> Data? {
        data.withUnsafeBytes { bytes -> Data? in
            for block in GIFBlockWalker(bytes) {
                guard case .extension(0xFF, let chain) = block else { continue }
                let parts = GIFBlockWalker.subBlocks(in: chain, of: bytes)
                guard let first = parts.first, bytes[first].elementsEqual(identifier) else { continue }
                var profile = Data()
                for part in parts.dropFirst() {
                    guard profile.count + part.count <= ICCTransformCache.maximumProfileSize else { return nil }
                    profile.append(contentsOf: bytes[part])
                }
                return profile.isEmpty ? nil : profile
            }
            return nil
        }
    }
}
