import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A GIF as an animation source: the blocks are walked once without decompressing anything
/// (sub-block lengths only) to find each frame's descriptor, graphics control and loop count;
/// drawing a frame opens giflib on the data, moves its reader to that frame's descriptor and
/// decodes just that frame.
///
/// Frames are clipped to the canvas (rows below it are never decoded); local and global
/// palettes, transparency, interlacing and the three disposal methods are applied; the loop
/// count comes from the NETSCAPE2.0 extension (none: play once). A canvas the file's bytes
/// could never fill (LZW expands at most 2731 pixels a byte) is refused before it is allocated.
struct GIFAnimationSource: AnimationFrameSource {
    /// The colour profile every frame is in (read once); frames decoded on demand convert with it.
    let iccProfile: Data?
    private struct Frame {
        var descriptorOffset: Int
        var left: Int, top: Int, width: Int, height: Int
        var transparentIndex: Int
        var visibleColumns: Int, visibleRows: Int
    }

    let data: Data
    let format = ImageFormat.gif
    private(set) var canvasWidth = 0
    private(set) var canvasHeight = 0
    private(set) var loopCount = 1
    private(set) var frames: [AnimationFrameInfo] = []
    private(set) var hasAlpha = false
    var alphaFromPixels: Bool { true }
    private var records: [Frame] = []
    /// Whether frame 0 paints the background colour over the canvas first (see ``draw(_:on:)``).
    private var fillsBackground = false

    /// Walks the blocks, keeping at most one frame past `options.maxFrameCount` (one when only
    /// the first frame is asked for).
    /// - Throws: ``WebImageError`` for a file that is not a GIF, ends inside a block, holds an
    ///   unknown block, or declares a canvas over the limits.
    init(data: Data, options: DecodeOptions) throws {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        self.data = data
        iccProfile = GIFICCProfile.read(data)
        guard data.count >= 13, data.starts(with: Array("GIF".utf8)) else { throw WebImageError.corruptData("GIF: not a GIF file") }
        let frameLimit = max(1, options.maxFrameCount)
        let framesWanted = options.firstFrameOnly ? 1 : (frameLimit == .max ? frameLimit : frameLimit + 1)
        var dispositions: [FrameDisposal] = []
        var keyFrames: [KeyFrames.Frame] = []
        var durations: [Double] = []
        try data.withUnsafeBytes { bytes throws in
            // Every field read is inside a block the walker or the length check above bounded.
            func word(_ offset: Int) -> Int { bytes.littleEndianUInt16(at: offset).map(Int.init) ?? 0 }
            let screenWidth = word(6), screenHeight = word(8), screenFlags = Int(bytes[10])
            let background = Int(bytes[11])
            let globalColors = screenFlags & 0x80 != 0 ? 1 << ((screenFlags & 0x07) + 1) : 0
            var disposal = 0, delay = 0.0, transparentIndex = -1
            var walker = GIFBlockWalker(bytes)
            scan: while records.count < framesWanted, let block = walker.next() {
                switch block {
                case .extension(let label, let chain):
                    let parts = GIFBlockWalker.subBlocks(in: chain, of: bytes)
                    guard let first = parts.first else { continue }
                    if label == 0xF9, first.count >= 4 {
                        let packed = Int(bytes[first.lowerBound])
                        disposal = (packed >> 2) & 0x07
                        delay = Double(word(first.lowerBound + 1)) / 100
                        transparentIndex = packed & 0x01 != 0 ? Int(bytes[first.lowerBound + 3]) : -1
                    } else if label == 0xFF, first.count >= 11 {
                        let identifier = String(decoding: bytes[first.lowerBound..<first.lowerBound + 11], as: UTF8.self)
                        guard identifier == "NETSCAPE2.0" || identifier == "ANIMEXTS1.0" else { continue }
                        for part in parts.dropFirst() where part.count >= 3 && bytes[part.lowerBound] == 1 {
                            loopCount = word(part.lowerBound + 1)
                        }
                    }
                case .image(let offset, _):
                    let left = word(offset + 1), top = word(offset + 3)
                    let width = word(offset + 5), height = word(offset + 7)
                    guard width > 0, height > 0 else { throw WebImageError.corruptData("GIF frame of size \(width)×\(height)") }
                    if canvasWidth == 0 {
                        // A zero-sized logical screen takes the first frame's size.
                        let size = screenWidth > 0 && screenHeight > 0 ? (screenWidth, screenHeight) : (left + width, top + height)
                        try options.checkFullSizeCanvas(width: size.0, height: size.1)
                        try CompressionBound.check(width: size.0, height: size.1, byteCount: data.count,
                                                   pixelsPerByte: CompressionBound.gifPixelsPerByte, format: "GIF")
                        canvasWidth = size.0
                        canvasHeight = size.1
                    }
                    let visibleColumns = max(0, min(width, canvasWidth - left))
                    let visibleRows = visibleColumns > 0 ? max(0, min(height, canvasHeight - top)) : 0
                    let frame = Frame(descriptorOffset: offset, left: left, top: top, width: width, height: height,
                                      transparentIndex: transparentIndex, visibleColumns: visibleColumns, visibleRows: visibleRows)
                    let visible = CanvasRect(x: left, y: top, width: visibleColumns, height: visibleRows)
                    if records.isEmpty {
                        // A first frame without transparency shows the background colour where it
                        // leaves the screen uncovered (as giflib's tools and Pillow draw it).
                        fillsBackground = transparentIndex < 0 && background < globalColors
                    }
                    if transparentIndex >= 0 { hasAlpha = true }
                    let shown: FrameDisposal = disposal == 2 ? .clear(visible) : disposal == 3 ? .restorePrevious : .keep
                    records.append(frame)
                    dispositions.append(shown)
                    durations.append(delay)
                    let drawn = records.count == 1 && fillsBackground ? CanvasRect(x: 0, y: 0, width: canvasWidth, height: canvasHeight) : visible
                    keyFrames.append(KeyFrames.Frame(
                        drawn: drawn,
                        overwritesCanvas: transparentIndex < 0 && visible.covers(canvasWidth: canvasWidth, canvasHeight: canvasHeight),
                        disposal: shown))
                    disposal = 0
                    delay = 0
                    transparentIndex = -1
                }
            }
            // A frame whose data runs past the end stays (drawing it reports the truncation), and
            // a file that stops between frames (often without its trailer) is complete enough.
            switch walker.end {
            case .malformed: throw WebImageError.corruptData("GIF: unexpected record")
            case .insideBlock: throw WebImageError.truncatedData("GIF ends inside a block")
            case .endOfData where records.isEmpty: throw WebImageError.truncatedData("GIF: no image before the end")
            default: break
            }
        }
        guard !records.isEmpty else { throw WebImageError.corruptData("GIF has no image") }
        let keys = KeyFrames.mark(keyFrames, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        frames = zip(zip(durations, dispositions), keys).map { AnimationFrameInfo(duration: $0.0, disposal: $0.1, isKeyFrame: $1) }
        // A guess from the headers (a whole decode looks at the pixels): a transparent index, or
        // a first frame that leaves part of an unfilled screen uncovered.
        if !keyFrames[0].drawn.covers(canvasWidth: canvasWidth, canvasHeight: canvasHeight) { hasAlpha = true }
    }

    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws {
        let frame = records[index]
        let reader = GIFReader(data: data)
        try withExtendedLifetime(reader) {
            var error: Int32 = 0
            guard let file = DGifOpen(Unmanaged.passUnretained(reader).toOpaque(), GIFReader.read, &error) else {
                throw GIFCoder.error(code: error, reader: reader)
            }
            defer { DGifCloseFile(file, &error) }
            // giflib reads records straight from the input function: moving the reader between
            // records is all a jump to another frame takes.
            reader.seek(to: frame.descriptorOffset)
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(file, &record) == GIF_OK, record == IMAGE_DESC_RECORD_TYPE,
                  DGifGetImageDesc(file) == GIF_OK else {
                throw GIFCoder.error(code: file.pointee.Error, reader: reader)
            }
            let descriptor = file.pointee.Image
            var palette = [UInt8](repeating: 0, count: 256 * 3)
            var paletteSize = 0
            if let colorMap = descriptor.ColorMap ?? file.pointee.SColorMap, let colors = colorMap.pointee.Colors {
                paletteSize = min(256, Int(colorMap.pointee.ColorCount))
                for entry in 0..<paletteSize {
                    palette[entry * 3] = colors[entry].Red
                    palette[entry * 3 + 1] = colors[entry].Green
                    palette[entry * 3 + 2] = colors[entry].Blue
                }
            }
            if index == 0, fillsBackground, let global = file.pointee.SColorMap, let colors = global.pointee.Colors {
                let background = Int(file.pointee.SBackGroundColor)
                if background < Int(global.pointee.ColorCount) {
                    let color = colors[background]
                    for pixel in 0..<(canvasWidth * canvasHeight) {
                        canvas[pixel * 4] = color.Red
                        canvas[pixel * 4 + 1] = color.Green
                        canvas[pixel * 4 + 2] = color.Blue
                        canvas[pixel * 4 + 3] = 255
                    }
                }
            }
            guard frame.visibleRows > 0 else { return }
            try drawRows(file, reader: reader, frame: frame, interlaced: descriptor.Interlace,
                         palette: palette, paletteSize: paletteSize, canvas: canvas)
        }
    }

    /// Decodes the frame's lines in file order up to the last one on the canvas and draws them.
    private func drawRows(_ file: UnsafeMutablePointer<GifFileType>, reader: GIFReader, frame: Frame, interlaced: Bool,
                          palette: [UInt8], paletteSize: Int, canvas: UnsafeMutableRawBufferPointer) throws {
        let width = frame.width, height = frame.height, visibleRows = frame.visibleRows
        let rows: [Int] = interlaced
            ? Array(stride(from: 0, to: height, by: 8)) + Array(stride(from: 4, to: height, by: 8))
                + Array(stride(from: 2, to: height, by: 4)) + Array(stride(from: 1, to: height, by: 2))
            : Array(0..<visibleRows)
        let lastNeeded = rows.lastIndex { $0 < visibleRows } ?? -1
        var line = [UInt8](repeating: 0, count: width)
        for row in rows.prefix(lastNeeded + 1) {
            let status = line.withUnsafeMutableBufferPointer { DGifGetLine(file, $0.baseAddress, Int32(width)) }
            guard status == GIF_OK else { throw GIFCoder.error(code: file.pointee.Error, reader: reader) }
            guard row < visibleRows else { continue }
            let y = frame.top + row
            for column in 0..<frame.visibleColumns {
                let index = Int(line[column])
                if index == frame.transparentIndex { continue }
                let offset = (y * canvasWidth + frame.left + column) * 4
                if index < paletteSize {
                    canvas[offset] = palette[index * 3]
                    canvas[offset + 1] = palette[index * 3 + 1]
                    canvas[offset + 2] = palette[index * 3 + 2]
                } else {
                    canvas[offset] = 0; canvas[offset + 1] = 0; canvas[offset + 2] = 0
                }
                canvas[offset + 3] = 255
            }
        }
    }
}
