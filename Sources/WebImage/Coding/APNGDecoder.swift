#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Animated PNG: libspng decodes still PNGs only, so each frame's data (`IDAT` or `fdAT`) is
/// repackaged as a standalone PNG, decoded with libspng, and composited on the canvas with the
/// frame's blend and dispose operations.
///
/// The chunks are walked once (lengths only) for the frame controls; frames are decoded when
/// drawn, by the cursor a whole decode and ``AnimatedImage`` share. A canvas the default image's
/// data could never fill is refused before it is allocated.
struct APNGDecoder: AnimationFrameSource {
    /// The colour profile every frame is in (read once); frames decoded on demand convert with it.
    let iccProfile: Data?
    private struct Chunk {
        var type: String
        var body: Range<Int>
    }

    private struct FrameControl {
        var width: Int, height: Int, x: Int, y: Int
        var duration: Double
        var dispose: UInt8, blend: UInt8
        var data: [Range<Int>] = []
    }

    private let data: Data
    let format = ImageFormat.png
    private(set) var canvasWidth = 0
    private(set) var canvasHeight = 0
    private(set) var loopCount = 0
    private(set) var frames: [AnimationFrameInfo] = []
    private(set) var hasAlpha = false
    private var controls: [FrameControl] = []
    private var header: Chunk
    private var shared: [Chunk] = []

    /// The whole animation, or `nil` when the file turns out not to animate (no frame controls).
    static func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage? {
        guard let source = try Self(data: data, options: options) else { return nil }
        return try AnimationDecoding.decodeAll(source, options: options)
    }

    /// Reads the chunk list and frame controls, keeping at most one frame past
    /// `options.maxFrameCount`; `nil` when the file does not animate (no frame controls).
    init?(data: Data, options: DecodeOptions) throws {
        self.data = data
        iccProfile = PNGColorProfile.profile(of: data)
        header = Chunk(type: "", body: 0..<0)
        let chunks = try readChunks()
        guard let header = chunks.first(where: { $0.type == "IHDR" }), header.body.count == 13 else {
            throw WebImageError.corruptData("PNG without IHDR")
        }
        self.header = header
        guard let control = chunks.first(where: { $0.type == "acTL" }), control.body.count == 8 else { return nil }
        guard let loops = data.bigEndianUInt32(at: control.body.lowerBound + 4),
              let width = data.bigEndianUInt32(at: header.body.lowerBound),
              let height = data.bigEndianUInt32(at: header.body.lowerBound + 4) else {
            throw WebImageError.corruptData("PNG: IHDR or acTL cut short")
        }
        loopCount = Int(loops)
        canvasWidth = Int(width)
        canvasHeight = Int(height)
        try options.checkFullSizeCanvas(width: canvasWidth, height: canvasHeight)

        // Group data chunks under the frame control that precedes them.
        var seenImageData = false
        // Frames past the frame limit are never decoded, so they are not collected either; one
        // more than the limit is, so that the budget reports the truncation.
        let frameLimit = max(1, options.maxFrameCount)
        let framesWanted = options.firstFrameOnly ? 1 : (frameLimit == .max ? frameLimit : frameLimit + 1)
        scan: for chunk in chunks {
            switch chunk.type {
            case "fcTL":
                guard controls.count < framesWanted else { break scan }
                let b = chunk.body.lowerBound
                guard chunk.body.count == 26,
                      let width = data.bigEndianUInt32(at: b + 4), let height = data.bigEndianUInt32(at: b + 8),
                      let x = data.bigEndianUInt32(at: b + 12), let y = data.bigEndianUInt32(at: b + 16),
                      let numerator = data.bigEndianUInt16(at: b + 20).map(Double.init),
                      let denominator = data.bigEndianUInt16(at: b + 22).map(Double.init) else {
                    throw WebImageError.corruptData("APNG fcTL size")
                }
                controls.append(FrameControl(
                    width: Int(width), height: Int(height), x: Int(x), y: Int(y),
                    duration: numerator / (denominator == 0 ? 100 : denominator),
                    dispose: data[b + 24], blend: data[b + 25]))
            case "IDAT":
                seenImageData = true
                // The default image is a frame only when a frame control precedes it.
                if !controls.isEmpty { controls[controls.count - 1].data.append(chunk.body) }
            case "fdAT":
                guard !controls.isEmpty, chunk.body.count > 4 else { continue }
                controls[controls.count - 1].data.append(chunk.body.lowerBound + 4..<chunk.body.upperBound)
            case "PLTE", "tRNS":
                if !seenImageData { shared.append(chunk) }
            default:
                break
            }
        }
        controls.removeAll { $0.data.isEmpty }
        guard !controls.isEmpty else { return nil }
        // The default image (IDAT) is a whole canvas-sized PNG, so its data bounds the canvas.
        let imageData = chunks.reduce(0) { $0 + ($1.type == "IDAT" ? $1.body.count : 0) }
        try CompressionBound.check(width: canvasWidth, height: canvasHeight, byteCount: imageData,
                                   pixelsPerByte: CompressionBound.pngPixelsPerByte, format: "APNG")
        let colorType = data[header.body.lowerBound + 9]
        hasAlpha = colorType == 4 || colorType == 6 || shared.contains { $0.type == "tRNS" }
        let keyInfo = controls.enumerated().map { index, frame in
            let rect = CanvasRect(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
            return KeyFrames.Frame(drawn: rect,
                                   overwritesCanvas: rect.covers(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
                                       && (frame.blend == 0 || !hasAlpha),
                                   disposal: Self.disposal(frame, index: index))
        }
        let keys = KeyFrames.mark(keyInfo, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        frames = zip(keyInfo, keys).enumerated().map { index, pair in
            AnimationFrameInfo(duration: controls[index].duration, disposal: pair.0.disposal, isKeyFrame: pair.1)
        }
    }

    /// Dispose: 1 clears the frame's rectangle, 2 restores the canvas as it was before (on the
    /// first frame, 2 means clear as well).
    private static func disposal(_ frame: FrameControl, index: Int) -> FrameDisposal {
        let rect = CanvasRect(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
        switch frame.dispose {
        case 1: return .clear(rect)
        case 2: return index == 0 ? .clear(rect) : .restorePrevious
        default: return .keep
        }
    }

    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws {
        let frame = controls[index]
        guard frame.width > 0, frame.height > 0, frame.x >= 0, frame.y >= 0,
              frame.x + frame.width <= canvasWidth, frame.y + frame.height <= canvasHeight else {
            throw WebImageError.corruptData("APNG frame outside the canvas")
        }
        let still = try PNGCoder.decodeStill(standalonePNG(for: frame, header: header, shared: shared),
                                             options: DecodeOptions(), checkLimit: false)
        composite(still.bitmap, onto: canvas, canvasWidth: canvasWidth, frame: frame)
    }

    /// Blends a frame onto the canvas: source replaces, over composites (straight alpha).
    private func composite(_ bitmap: Bitmap, onto canvas: UnsafeMutableRawBufferPointer, canvasWidth: Int, frame: FrameControl) {
        bitmap.withUnsafeBytes { source in
            for row in 0..<frame.height {
                for column in 0..<frame.width {
                    let s = (row * frame.width + column) * 4
                    let d = ((frame.y + row) * canvasWidth + frame.x + column) * 4
                    let sourceAlpha = Int(source[s + 3])
                    if frame.blend == 0 || sourceAlpha == 255 {
                        for channel in 0..<4 { canvas[d + channel] = source[s + channel] }
                        continue
                    }
                    // Porter-Duff "over" on straight alpha, in integers with 7 fraction bits
                    // (the rounding Pillow's alpha_composite uses, so frames compare exactly).
                    let destinationAlpha = Int(canvas[d + 3])
                    let total = sourceAlpha * 255 + destinationAlpha * (255 - sourceAlpha)
                    guard total > 0 else {
                        for channel in 0..<4 { canvas[d + channel] = 0 }
                        continue
                    }
                    let sourceWeight = sourceAlpha * 255 * 255 * 128 / total
                    let destinationWeight = 255 * 128 - sourceWeight
                    for channel in 0..<3 {
                        let value = Int(source[s + channel]) * sourceWeight + Int(canvas[d + channel]) * destinationWeight + (0x80 << 7)
                        canvas[d + channel] = UInt8(clamping: (((value >> 8) + value) >> 8) >> 7)
                    }
                    let alpha = total + 0x80
                    canvas[d + 3] = UInt8(clamping: ((alpha >> 8) + alpha) >> 8)
                }
            }
        }
    }

    /// A PNG holding only this frame: the header resized to the frame, the palette chunks, and
    /// the frame's data as one IDAT.
    private func standalonePNG(for frame: FrameControl, header: Chunk, shared: [Chunk]) -> Data {
        var png = Data(PNGCoder.signature)
        var ihdr = Data()
        ihdr.appendBigEndian(UInt32(frame.width))
        ihdr.appendBigEndian(UInt32(frame.height))
        ihdr.append(data[(header.body.lowerBound + 8)..<header.body.upperBound])
        png.appendChunk("IHDR", ihdr)
        for chunk in shared { png.appendChunk(chunk.type, data[chunk.body]) }
        var imageData = Data()
        for range in frame.data { imageData.append(data[range]) }
        png.appendChunk("IDAT", imageData)
        png.appendChunk("IEND", Data())
        return png
    }

    /// Every chunk up to `IEND`, by ``PNGChunkWalker``; ranges are indices of `data`.
    private func readChunks() throws -> [Chunk] {
        let base = data.startIndex
        return try data.withUnsafeBytes { bytes throws -> [Chunk] in
            var chunks: [Chunk] = []
            var walker = PNGChunkWalker(bytes)
            while let chunk = walker.next() {
                guard chunk.isComplete else { throw WebImageError.truncatedData("PNG chunk \(chunk.type) runs past the end") }
                chunks.append(Chunk(type: chunk.type, body: (base + chunk.body.lowerBound)..<(base + chunk.body.upperBound)))
                if chunk.type == "IEND" { return chunks }
            }
            throw WebImageError.truncatedData("PNG ends before IEND")
        }
    }
}

extension Data {
    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
    }

    /// Appends a PNG chunk: length, type, body, CRC-32 of type and body.
    mutating func appendChunk(_ type: String, _ body: Data) {
        appendBigEndian(UInt32(body.count))
        var typed = Data(type.utf8)
        typed.append(body)
        append(typed)
        appendBigEndian(CRC32.checksum(typed))
    }
}

