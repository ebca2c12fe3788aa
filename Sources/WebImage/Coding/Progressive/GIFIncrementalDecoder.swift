#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A GIF shown frame by frame while it downloads: each time another frame's data is complete,
/// the partial image is the animation of the frames so far, decoded by ``GIFCoder`` from the bytes
/// up to the end of that frame (so every limit of the one-shot decode applies). With
/// ``DecodeOptions/firstFrameOnly`` only the first frame is shown. The final image
/// (`isComplete`) is ``GIFCoder``'s one-shot decode of the whole file.
final class GIFIncrementalDecoder: CancellableIncrementalDecoder {
    let cancellation = DecodeCancellation()

    private let options: DecodeOptions
    private var scanner = GIFBlockScanner()
    private var framesShown = 0

    init(options: DecodeOptions) {
        self.options = options
    }

    func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
        try cancellation.check()
        if isComplete { return try GIFCoder().decode(data, options: options) }
        try scanner.scan(data)
        let frames = options.firstFrameOnly ? min(scanner.completeFrames, 1) : scanner.completeFrames
        guard frames > framesShown, let end = scanner.end(ofFrame: frames) else { return nil }
        var prefix = Data(data[data.startIndex..<(data.startIndex + end)])
        prefix.append(GIFBlockScanner.trailer)
        let image = try GIFCoder().decode(prefix, options: options)
        try cancellation.check()
        framesShown = frames
        return image
    }
}

/// Walks a GIF's block structure as its bytes arrive, recording where each frame's data ends.
///
/// It reads sizes only (header, colour tables, extension and image sub-block chains), never
/// pixels, and resumes where the last scan stopped, so the whole walk is linear in the file.
struct GIFBlockScanner {
    static let trailer: UInt8 = 0x3B

    /// Where the next unread block starts (relative to the data's start).
    private var offset = 0
    private var headerRead = false
    /// The offset just past each complete image block.
    private var frameEnds: [Int] = []
    /// Set at the trailer or at bytes that are no GIF block: nothing more to find.
    private var finished = false

    /// How many frames' data is complete.
    var completeFrames: Int { frameEnds.count }

    /// The offset just past frame `count`'s data (1-based), if complete.
    func end(ofFrame count: Int) -> Int? {
        count >= 1 && count <= frameEnds.count ? frameEnds[count - 1] : nil
    }

    /// Reads the blocks `data` (the file so far, which only grows) completes.
    /// - Throws: ``WebImageError/corruptData(_:)`` for data that is no GIF.
    mutating func scan(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            if !headerRead {
                guard bytes.count >= 13 else { return }
                guard bytes.starts(with: "GIF87a".utf8) || bytes.starts(with: "GIF89a".utf8) else {
                    throw WebImageError.corruptData("GIF: no GIF signature")
                }
                let flags = bytes[10]
                offset = 13 + (flags & 0x80 != 0 ? 3 << (Int(flags & 0x07) + 1) : 0)
                headerRead = true
            }
            while !finished, let next = Self.blockEnd(bytes, at: offset) {
                if bytes[offset] == 0x2C { frameEnds.append(next) }
                if bytes[offset] == Self.trailer || next == offset { finished = true }
                offset = next
            }
        }
    }

    /// The offset past the block at `start`, or `nil` when the data so far does not hold it all.
    /// An unknown block type ends the walk (returns `start`).
    private static func blockEnd(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case 0x21:
            return subBlocksEnd(bytes, at: start + 2)
        case 0x2C:
            guard start + 10 <= bytes.count else { return nil }
            let flags = bytes[start + 9]
            let table = flags & 0x80 != 0 ? 3 << (Int(flags & 0x07) + 1) : 0
            // The descriptor, the local colour table, the LZW code size byte, then the data.
            return subBlocksEnd(bytes, at: start + 10 + table + 1)
        case trailer:
            return start + 1
        default:
            return start
        }
    }

    /// The offset past a chain of sub-blocks starting at `start` (ended by a zero length), or `nil`.
    private static func subBlocksEnd(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        var position = start
        while position < bytes.count {
            let length = Int(bytes[position])
            position += 1 + length
            if length == 0 { return position }
        }
        return nil
    }
}

extension GIFCoder {
    /// A ``GIFIncrementalDecoder`` for GIF data.
    public func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .gif ? GIFIncrementalDecoder(options: options) : nil
    }
}
