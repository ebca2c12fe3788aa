import Foundation
import Testing
@testable import WebImage

/// GIF bytes written by hand: a logical screen, a global palette and frames whose LZW data is
/// compressed as giflib's own encoder does it, so samples can be shaped freely (frames larger
/// than or outside the screen, data that ends early, as many frames as wanted).
struct GIFBuilder {
    private(set) var bytes: [UInt8]

    /// A screen of `width` × `height` with a 4-colour palette: black, red, green, blue.
    init(width: Int, height: Int) {
        bytes = Array("GIF89a".utf8) + GIFBuilder.le16(width) + GIFBuilder.le16(height) + [0x81, 0, 0]
            + [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
    }

    /// One image record: `pixels` are palette indices (0...3) row by row, and may stop before
    /// `width` × `height` (the LZW data then ends early, as in a truncated frame).
    /// With `interlaced`, `pixels` are in the file's row order (rows 0, 8, 16..., then 4, 12...).
    mutating func addFrame(left: Int = 0, top: Int = 0, width: Int, height: Int, pixels: [UInt8], delay: Int = 0,
                           interlaced: Bool = false) {
        bytes += [0x21, 0xF9, 0x04, 0x00] + GIFBuilder.le16(delay) + [0, 0]
        bytes += GIFBuilder.imageRecord(left: left, top: top, width: width, height: height, pixels: pixels, interlaced: interlaced)
    }

    /// The rows of an interlaced image of `height` rows in the order the file holds them.
    static func interlacedRowOrder(height: Int) -> [Int] {
        Array(stride(from: 0, to: height, by: 8)) + Array(stride(from: 4, to: height, by: 8))
            + Array(stride(from: 2, to: height, by: 4)) + Array(stride(from: 1, to: height, by: 2))
    }

    /// `count` copies of one prepared record (`record` from ``imageRecord(left:top:width:height:pixels:)``).
    mutating func repeatRecord(_ record: [UInt8], count: Int) {
        bytes.reserveCapacity(bytes.count + record.count * count + 1)
        for _ in 0..<count { bytes += record }
    }

    /// The file, with its trailer.
    var data: Data { Data(bytes + [0x3B]) }

    /// An image descriptor with its LZW data in sub-blocks, without a graphics control extension.
    static func imageRecord(left: Int, top: Int, width: Int, height: Int, pixels: [UInt8], interlaced: Bool = false) -> [UInt8] {
        var record: [UInt8] = [0x2C] + le16(left) + le16(top) + le16(width) + le16(height) + [interlaced ? 0x40 : 0, 2]
        let compressed = lzw(pixels, minimumCodeSize: 2)
        var offset = 0
        while offset < compressed.count {
            let length = min(255, compressed.count - offset)
            record.append(UInt8(length))
            record += compressed[offset..<(offset + length)]
            offset += length
        }
        record.append(0)
        return record
    }

    /// GIF's LZW with giflib's code-width schedule (EGifCompressLine): codes grow to 12 bits and
    /// the table is cleared when full.
    static func lzw(_ pixels: [UInt8], minimumCodeSize: Int) -> [UInt8] {
        let clear = 1 << minimumCodeSize, end = clear + 1
        var running = end + 1, bits = minimumCodeSize + 1, limit = 1 << bits
        var table = [Int16](repeating: -1, count: 4096 << 8)
        var output: [UInt8] = []
        var accumulator = 0, pending = 0
        func emit(_ code: Int) {
            accumulator |= code << pending
            pending += bits
            while pending >= 8 {
                output.append(UInt8(accumulator & 0xFF))
                accumulator >>= 8
                pending -= 8
            }
            if running >= limit, code <= 4095 {
                bits += 1
                limit = 1 << bits
            }
        }
        emit(clear)
        var current = -1
        for pixel in pixels {
            guard current >= 0 else { current = Int(pixel); continue }
            let key = current << 8 | Int(pixel)
            if table[key] >= 0 {
                current = Int(table[key])
                continue
            }
            emit(current)
            current = Int(pixel)
            if running >= 4095 {
                emit(clear)
                running = end + 1
                bits = minimumCodeSize + 1
                limit = 1 << bits
                for index in table.indices { table[index] = -1 }
            } else {
                table[key] = Int16(running)
                running += 1
            }
        }
        if current >= 0 { emit(current) }
        emit(end)
        if pending > 0 { output.append(UInt8(accumulator & 0xFF)) }
        return output
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
}

/// APNG bytes assembled from PNGs the project's own encoder writes: each frame's IDAT data
/// becomes an `fdAT` (the first frame's stays the IDAT, so the file is also a valid still PNG).
struct APNGBuilder {
    private var chunks = Data()
    private var sequence: UInt32 = 0
    private var frameCount: UInt32 = 0
    private let width: Int, height: Int

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Appends a frame of `bitmap` at `x`, `y` (replace blend, no dispose) lasting `delay` hundredths.
    mutating func addFrame(_ bitmap: Bitmap, x: Int = 0, y: Int = 0, delay: Int = 10) throws {
        try addFrame(data: APNGBuilder.imageData(of: bitmap), width: bitmap.width, height: bitmap.height, x: x, y: y, delay: delay)
    }

    /// Appends a frame from already compressed PNG image data.
    mutating func addFrame(data: Data, width: Int, height: Int, x: Int = 0, y: Int = 0, delay: Int = 10) {
        var control = Data()
        control.appendBigEndian(sequence)
        control.appendBigEndian(UInt32(width))
        control.appendBigEndian(UInt32(height))
        control.appendBigEndian(UInt32(x))
        control.appendBigEndian(UInt32(y))
        control.append(contentsOf: [UInt8(delay >> 8), UInt8(delay & 0xFF), 0, 100, 0, 0])
        chunks.appendChunk("fcTL", control)
        sequence += 1
        if frameCount == 0 {
            chunks.appendChunk("IDAT", data)
        } else {
            var body = Data()
            body.appendBigEndian(sequence)
            body.append(data)
            chunks.appendChunk("fdAT", body)
            sequence += 1
        }
        frameCount += 1
    }

    /// The file: signature, IHDR (8-bit RGBA), acTL, the frames, IEND.
    var data: Data {
        var png = Data(PNGCoder.signature)
        var header = Data()
        header.appendBigEndian(UInt32(width))
        header.appendBigEndian(UInt32(height))
        header.append(contentsOf: [8, 6, 0, 0, 0])
        png.appendChunk("IHDR", header)
        var control = Data()
        control.appendBigEndian(frameCount)
        control.appendBigEndian(0)
        png.appendChunk("acTL", control)
        png.append(chunks)
        png.appendChunk("IEND", Data())
        return png
    }

    /// The concatenated IDAT data of `bitmap` encoded as an RGBA PNG.
    static func imageData(of bitmap: Bitmap) throws -> Data {
        let png = try PNGCoder.encodeBitmap(bitmap, keepAlpha: true)
        var data = Data()
        var offset = png.startIndex + 8
        while offset + 12 <= png.endIndex {
            let length = png[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            if png[(offset + 4)..<(offset + 8)].elementsEqual("IDAT".utf8) {
                data.append(png[(offset + 8)..<(offset + 8 + length)])
            }
            offset += 12 + length
        }
        return data
    }
}

/// A sample written to a temporary file, for the `webimage` binary to decode.
func writeSample(_ data: Data, named name: String, in directory: TemporaryDirectory) throws -> String {
    let url = directory.url.appendingPathComponent(name)
    try data.write(to: url)
    return url.path
}

/// `coder` refuses `data` over `pixelLimit` with ``WebImageError/tooLarge`` (known from the
/// header, before any pixel is decoded) and, asked to scale large images down, decodes it within
/// the limit; returns that scaled image.
@discardableResult
func expectPixelLimitHolds(_ coder: some ImageCoder, _ data: Data, pixelLimit: Int,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> DecodedImage {
    let error = #expect(throws: WebImageError.self, sourceLocation: sourceLocation) {
        try coder.decode(data, options: DecodeOptions(pixelLimit: pixelLimit))
    }
    if case .tooLarge = error {} else {
        Issue.record("expected tooLarge, got \(String(describing: error))", sourceLocation: sourceLocation)
    }
    let scaled = try coder.decode(data, options: DecodeOptions(pixelLimit: pixelLimit, scaleDownLargeImages: true))
    #expect(scaled.width * scaled.height <= pixelLimit, sourceLocation: sourceLocation)
    return scaled
}

/// `truncated` cut at each of `lengths` gets a typed error from `coder`; `corrupted` with every
/// `step`th byte from `offset` flipped decodes or gets one, and never crashes.
func expectHostileBytesFail(_ coder: some ImageCoder, truncating truncated: Data, at lengths: [Int],
                            corrupting corrupted: Data, from offset: Int, every step: Int,
                            sourceLocation: SourceLocation = #_sourceLocation) {
    for length in lengths {
        #expect(throws: WebImageError.self, sourceLocation: sourceLocation) {
            try coder.decode(truncated.prefix(length), options: DecodeOptions())
        }
    }
    var flipped = corrupted
    for index in stride(from: offset, to: flipped.count, by: step) { flipped[flipped.startIndex + index] ^= 0x5A }
    _ = try? coder.decode(flipped, options: DecodeOptions())
}
