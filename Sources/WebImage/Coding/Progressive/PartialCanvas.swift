#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The pixels a row-by-row incremental decoder has written so far: one RGBA8 buffer that lives as
/// long as the decoder and is filled as data arrives, with rows not yet decoded transparent.
///
/// Each partial image is a copy (``snapshot(rows:)``): the canvas keeps changing while the image
/// handed out must not.
final class PartialCanvas {
    let width: Int
    let height: Int
    private let block: PixelAllocator.Block
    let bytes: UnsafeMutableRawBufferPointer

    /// Allocates a cleared canvas; the caller has checked the size against its limits already.
    /// - Throws: ``WebImageError/tooLarge(_:)`` when the size overflows or cannot be had.
    init(width: Int, height: Int) throws {
        guard let count = Bitmap.byteCount(width: width, height: height) else {
            throw WebImageError.tooLarge("image size \(width)×\(height)")
        }
        self.width = width
        self.height = height
        block = try PixelAllocator.shared.allocate(byteCount: count, hugePages: false)
        bytes = UnsafeMutableRawBufferPointer(start: block.pointer, count: count)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { PixelAllocator.shared.release(block) }

    var bytesPerRow: Int { width * 4 }

    /// The address of row `row`.
    func row(_ row: Int) -> UnsafeMutablePointer<UInt8> {
        bytes.baseAddress!.advanced(by: row * bytesPerRow).assumingMemoryBound(to: UInt8.self)
    }

    /// A bitmap of the first `rows` rows, the rest transparent.
    func snapshot(rows: Int) throws -> Bitmap {
        let filled = min(max(rows, 0), height) * bytesPerRow
        return try Bitmap(width: width, height: height) { target in
            guard let to = target.baseAddress, let from = bytes.baseAddress else { return }
            to.copyMemory(from: from, byteCount: filled)
            (to + filled).initializeMemory(as: UInt8.self, repeating: 0, count: target.count - filled)
        }
    }
}
