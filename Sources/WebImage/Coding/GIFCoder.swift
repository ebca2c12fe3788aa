import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// GIF decoding with giflib, every frame composited on a full canvas.
///
/// Reads record by record (not `DGifSlurp`), so frames past the animation limits are never
/// decoded and a frame's declared size never becomes an allocation by itself. Frames are clipped
/// to the canvas: rows below it are skipped undecoded. A canvas the file's bytes could never fill
/// (LZW expands at most 2731 pixels a byte) is refused before it is allocated. Thumbnails shrink
/// each frame as it is composed, so only one full-size canvas exists at a time. Local and global
/// palettes, transparency, interlacing and the three disposal methods are applied; the loop count
/// comes from the NETSCAPE2.0 extension (none: play once).
package struct GIFCoder: ImageCoder {
    /// Creates the coder.
    package init() {}

    package func canDecode(_ data: Data) -> Bool {
        data.count >= 6 && (data.starts(with: Array("GIF87a".utf8)) || data.starts(with: Array("GIF89a".utf8)))
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let reader = GIFReader(data: data)
        return try withExtendedLifetime(reader) {
            var error: Int32 = 0
            guard let file = DGifOpen(Unmanaged.passUnretained(reader).toOpaque(), GIFReader.read, &error) else {
                throw Self.error(code: error, reader: reader)
            }
            defer { DGifCloseFile(file, &error) }
            var composer = GIFComposer(file: file, reader: reader, options: options)
            return try composer.decode()
        }
    }

    static func error(code: Int32, reader: GIFReader) -> WebImageError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "GIF error \(code)"
        if reader.hitEnd || code == D_GIF_ERR_EOF_TOO_SOON { return .truncatedData("GIF: \(message)") }
        if code == D_GIF_ERR_NOT_ENOUGH_MEM || code == D_GIF_ERR_DATA_TOO_BIG { return .tooLarge("GIF: \(message)") }
        return .corruptData("GIF: \(message)")
    }
}

/// One decode's state: the canvas and the frames made so far.
private struct GIFComposer {
    let file: UnsafeMutablePointer<GifFileType>
    let reader: GIFReader
    let options: DecodeOptions

    private var canvasWidth = 0, canvasHeight = 0
    private var canvas: [UInt8] = []
    private var frames: [ImageFrame] = []
    private var budget: AnimationBudget?
    /// The size frames are returned at: the canvas, or the thumbnail asked for.
    private var target = (width: 0, height: 0)
    private var loopCount = 1
    private var usesTransparency = false
    // The graphics control extension applies to the next image only.
    private var disposal = 0, delay: Double = 0, transparentIndex = -1

    init(file: UnsafeMutablePointer<GifFileType>, reader: GIFReader, options: DecodeOptions) {
        self.file = file
        self.reader = reader
        self.options = options
    }

    mutating func decode() throws -> DecodedImage {
        if file.pointee.SWidth > 0, file.pointee.SHeight > 0 {
            try makeCanvas(width: Int(file.pointee.SWidth), height: Int(file.pointee.SHeight))
        }
        records: while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(file, &record) == GIF_OK else {
                // A file that stops between frames (often without its trailer) is complete enough.
                if !frames.isEmpty, reader.hitEnd { break records }
                throw GIFCoder.error(code: file.pointee.Error, reader: reader)
            }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard try readFrame() else { break records }
            case EXTENSION_RECORD_TYPE:
                try readExtension()
            case TERMINATE_RECORD_TYPE:
                break records
            default:
                throw WebImageError.corruptData("GIF: unexpected record")
            }
        }
        guard !frames.isEmpty else { throw WebImageError.corruptData("GIF has no image") }
        var image = try DecodedImage(frames: frames, loopCount: loopCount, format: .gif, scale: options.scale,
                                     hasAlpha: usesTransparency)
        image.truncation = budget?.truncation
        return image
    }

    /// Checks the canvas against the limits and the file's size, then allocates it.
    private mutating func makeCanvas(width: Int, height: Int) throws {
        try options.checkFullSizeCanvas(width: width, height: height)
        try CompressionBound.check(width: width, height: height, byteCount: reader.byteCount,
                                   pixelsPerByte: CompressionBound.gifPixelsPerByte, format: "GIF")
        canvasWidth = width
        canvasHeight = height
        target = try options.targetSize(width: width, height: height)
        budget = AnimationBudget(options: options, canvasWidth: width, canvasHeight: height, kept: target)
        canvas = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// Reads one image record; `false` when the animation stops before it (a limit, or only the
    /// first frame asked for).
    private mutating func readFrame() throws -> Bool {
        guard DGifGetImageDesc(file) == GIF_OK else { throw GIFCoder.error(code: file.pointee.Error, reader: reader) }
        let descriptor = file.pointee.Image
        let left = Int(descriptor.Left), top = Int(descriptor.Top)
        let width = Int(descriptor.Width), height = Int(descriptor.Height)
        guard width > 0, height > 0 else { throw WebImageError.corruptData("GIF frame of size \(width)×\(height)") }
        if canvas.isEmpty {
            // A zero-sized logical screen takes the first frame's size.
            try makeCanvas(width: left + width, height: top + height)
        }
        guard budget?.admitFrame() == true else { return false }
        let colorMap = descriptor.ColorMap ?? file.pointee.SColorMap
        var palette = [UInt8](repeating: 0, count: 256 * 3)
        var paletteSize = 0
        if let colorMap, let colors = colorMap.pointee.Colors {
            paletteSize = min(256, Int(colorMap.pointee.ColorCount))
            for index in 0..<paletteSize {
                palette[index * 3] = colors[index].Red
                palette[index * 3 + 1] = colors[index].Green
                palette[index * 3 + 2] = colors[index].Blue
            }
        }
        if frames.isEmpty, transparentIndex < 0, let global = file.pointee.SColorMap, let colors = global.pointee.Colors {
            // A first frame without transparency that leaves part of the screen uncovered shows the
            // background colour there (as giflib's tools and Pillow draw it).
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
        // The part of the frame on the canvas; the rest is never drawn, and rows past the last
        // visible one are never decoded.
        let visibleColumns = max(0, min(width, canvasWidth - left))
        let visibleRows = visibleColumns > 0 ? max(0, min(height, canvasHeight - top)) : 0
        let saved = disposal == 3 ? canvas : nil
        let decodedLines = visibleRows > 0
            ? try drawRows(descriptor.Interlace, left: left, top: top, width: width, height: height,
                           visibleColumns: visibleColumns, visibleRows: visibleRows,
                           palette: palette, paletteSize: paletteSize)
            : 0
        // Once every line is decoded giflib has read the data to its end itself.
        if decodedLines < height { try skipImageData() }
        try appendFrame()
        switch disposal {
        case 2:
            for y in top..<(top + visibleRows) {
                let start = (y * canvasWidth + left) * 4
                canvas.replaceSubrange(start..<(start + visibleColumns * 4), with: repeatElement(0, count: visibleColumns * 4))
            }
        case 3:
            if let saved { canvas = saved }
        default:
            break
        }
        disposal = 0
        delay = 0
        transparentIndex = -1
        return !options.firstFrameOnly
    }

    /// Decodes the frame's lines in file order up to the last one on the canvas and draws them;
    /// returns how many lines were decoded.
    private mutating func drawRows(_ interlaced: Bool, left: Int, top: Int, width: Int, height: Int,
                                   visibleColumns: Int, visibleRows: Int, palette: [UInt8], paletteSize: Int) throws -> Int {
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
            let y = top + row
            for column in 0..<visibleColumns {
                let index = Int(line[column])
                if index == transparentIndex { continue }
                let offset = (y * canvasWidth + left + column) * 4
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
        return lastNeeded + 1
    }

    /// Passes over the rest of a frame's image data (rows off the canvas) without decompressing
    /// it, as giflib itself does after the last pixel: giflib reads whole sub-blocks, so the file
    /// is at a sub-block boundary here.
    private func skipImageData() throws {
        var block: UnsafeMutablePointer<GifByteType>?
        repeat {
            guard DGifGetCodeNext(file, &block) == GIF_OK else {
                throw GIFCoder.error(code: file.pointee.Error, reader: reader)
            }
        } while block != nil
    }

    /// Snapshots the canvas as the next frame, shrunk at once when a thumbnail is asked for.
    private mutating func appendFrame() throws {
        var bitmap = try Bitmap(width: canvasWidth, height: canvasHeight) { buffer in
            canvas.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
        // The image has alpha when some shown frame is not fully opaque.
        if !usesTransparency { usesTransparency = bitmap.containsTransparency }
        if (target.width, target.height) != (canvasWidth, canvasHeight) {
            bitmap = try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
        }
        frames.append(ImageFrame(bitmap: bitmap, duration: delay))
    }
    private mutating func readExtension() throws {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(file, &code, &block) == GIF_OK else {
            throw GIFCoder.error(code: file.pointee.Error, reader: reader)
        }
        var isNetscape = false
        var first = true
        while let current = block {
            let length = Int(current[0])
            if code == GRAPHICS_EXT_FUNC_CODE, first, length >= 4 {
                let packed = current[1]
                disposal = Int((packed >> 2) & 0x07)
                delay = Double(Int(current[2]) | Int(current[3]) << 8) / 100
                transparentIndex = packed & 0x01 != 0 ? Int(current[4]) : -1
            } else if code == APPLICATION_EXT_FUNC_CODE, first, length >= 11 {
                let identifier = String(decoding: UnsafeBufferPointer(start: current + 1, count: 11), as: UTF8.self)
                isNetscape = identifier == "NETSCAPE2.0" || identifier == "ANIMEXTS1.0"
            } else if isNetscape, length >= 3, current[1] == 1 {
                loopCount = Int(current[2]) | Int(current[3]) << 8
            }
            first = false
            guard DGifGetExtensionNext(file, &block) == GIF_OK else {
                throw GIFCoder.error(code: file.pointee.Error, reader: reader)
            }
        }
    }
}
