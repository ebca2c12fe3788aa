import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// GIF encoding with giflib's EGif API, stills and animations, each frame quantised by
/// ``ColorQuantizer``.
///
/// A still gets a global palette; an animation one local palette per frame, a graphics control
/// extension per frame (delay in centiseconds, disposal, transparent index) and a `NETSCAPE2.0`
/// loop extension unless it plays once. Pixels with alpha below 128 are transparent. A kept ICC
/// profile is embedded as an `ICCRGBG1` extension, which ``GIFCoder`` reads back.
///
/// Frames after the first are written as the rectangle that changed since the frame before,
/// drawn over it (disposal "do not dispose"), when no transparency is involved: a transparent
/// pixel can only show what is under it, so a frame with transparency is written whole on a
/// canvas its predecessor cleared (disposal "restore to background", which also must cover the
/// whole canvas). Every frame of an animation with transparency anywhere keeps a transparent
/// index, because Pillow clears to the background colour, not to transparency, for a frame without one.
///
/// Memory: the canvas size is checked against GIF's 16-bit sides before anything is allocated;
/// the encode then holds one frame's indices (a quarter of its bitmap), the quantiser's bounded
/// tables and the output, which LZW keeps under 12 bits a pixel.
enum GIFEncoder {
    /// GIF stores sides, delays (in centiseconds) and the loop count in 16 bits.
    static let maxValue = 65535

    static func encode(_ image: DecodedImage, options: EncodeOptions, quantizer: ColorQuantizer) throws -> Data {
        let width = image.width, height = image.height
        guard width <= maxValue, height <= maxValue else {
            throw WebImageError.tooLarge("GIF: \(width)×\(height) is over GIF's largest side, \(maxValue) pixels")
        }
        let frames = options.firstFrameOnly ? [image.frames[0]] : image.frames
        for (index, frame) in frames.enumerated() where frame.bitmap.width != width || frame.bitmap.height != height {
            throw WebImageError.encodingFailed("GIF: frame \(index) is \(frame.bitmap.width)×\(frame.bitmap.height), not the canvas size \(width)×\(height)")
        }
        let writer = GIFWriter()
        return try withExtendedLifetime(writer) {
            var openError: Int32 = 0
            guard let file = EGifOpen(Unmanaged.passUnretained(writer).toOpaque(), GIFWriter.write, &openError) else {
                throw error(code: openError)
            }
            var closed = false
            defer {
                if !closed {
                    var ignored: Int32 = 0
                    EGifCloseFile(file, &ignored)
                }
            }
            EGifSetGifVersion(file, true)
            if frames.count > 1 {
                try writeAnimation(frames, loopCount: image.loopCount, profile: image.iccProfile, to: file, quantizer: quantizer,
                                   stop: options.stop)
            } else {
                try writeStill(frames[0].bitmap, profile: image.iccProfile, to: file, quantizer: quantizer)
            }
            closed = true
            var closeError: Int32 = 0
            guard EGifCloseFile(file, &closeError) == GIF_OK else { throw error(code: closeError) }
            return writer.data
        }
    }

    private static func writeStill(_ bitmap: Bitmap, profile: Data?, to file: UnsafeMutablePointer<GifFileType>,
                                   quantizer: ColorQuantizer) throws {
        let whole = CanvasRect(x: 0, y: 0, width: bitmap.width, height: bitmap.height)
        var quantized = quantizer.quantize(bitmap, region: whole, reserveTransparent: false)
        try withColorMap(quantized.palette) { map in
            try check(EGifPutScreenDesc(file, Int32(bitmap.width), Int32(bitmap.height), 8, 0, map), file)
        }
        try writeProfile(profile, to: file)
        if let transparent = quantized.transparentIndex {
            try writeGraphicsControl(disposal: 0, delay: 0, transparentIndex: transparent, to: file)
        }
        try check(EGifPutImageDesc(file, 0, 0, Int32(bitmap.width), Int32(bitmap.height), false, nil), file)
        try writeRows(&quantized.indices, width: bitmap.width, height: bitmap.height, to: file)
    }

    private static func writeAnimation(_ frames: [ImageFrame], loopCount: Int, profile: Data?,
                                       to file: UnsafeMutablePointer<GifFileType>, quantizer: ColorQuantizer, stop: StopFlag) throws {
        let width = frames[0].bitmap.width, height = frames[0].bitmap.height
        let whole = CanvasRect(x: 0, y: 0, width: width, height: height)
        try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, nil), file)
        if loopCount != 1 { try writeLoopCount(min(maxValue, max(0, loopCount)), to: file) }
        try writeProfile(profile, to: file)
        let transparency = frames.map { $0.bitmap.withUnsafeBytes { Self.hasTransparentPixel($0) } }
        let reserveTransparent = transparency.contains(true)
        for (index, frame) in frames.enumerated() {
            try stop.check()
            // What follows this frame (the first frame again when the animation loops).
            let nextHasTransparency = index + 1 < frames.count ? transparency[index + 1] : transparency[0]
            let region = index == 0 || transparency[index] || nextHasTransparency
                ? whole : changedRect(from: frames[index - 1].bitmap, to: frame.bitmap)
            var quantized = quantizer.quantize(frame.bitmap, region: region, reserveTransparent: reserveTransparent)
            try writeGraphicsControl(disposal: nextHasTransparency ? DISPOSE_BACKGROUND : DISPOSE_DO_NOT,
                                     delay: centiseconds(frame.duration), transparentIndex: quantized.transparentIndex, to: file)
            try withColorMap(quantized.palette) { map in
                try check(EGifPutImageDesc(file, Int32(region.x), Int32(region.y), Int32(region.width), Int32(region.height),
                                           false, map), file)
            }
            try writeRows(&quantized.indices, width: region.width, height: region.height, to: file)
        }
    }

    /// A frame's delay in GIF's centiseconds, rounded and clamped to 16 bits.
    static func centiseconds(_ duration: Double) -> Int {
        guard duration.isFinite, duration > 0 else { return 0 }
        return Int(min(Double(maxValue), (duration * 100).rounded()))
    }

    /// Whether any pixel is transparent by ``ColorQuantizer/alphaThreshold``.
    private static func hasTransparentPixel(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 3
        while index < bytes.count {
            if bytes[index] < ColorQuantizer.alphaThreshold { return true }
            index += 4
        }
        return false
    }

    /// The smallest rectangle holding every pixel that differs between two same-size bitmaps
    /// (a 1×1 one at the origin when none does: GIF has no empty frame).
    static func changedRect(from previous: Bitmap, to current: Bitmap) -> CanvasRect {
        previous.withUnsafeBytes { old in
            current.withUnsafeBytes { new in
                let a = old.bindMemory(to: UInt32.self), b = new.bindMemory(to: UInt32.self)
                let width = current.width, height = current.height
                var minX = width, minY = height, maxX = -1, maxY = -1
                for y in 0..<height {
                    let row = y * width
                    var first = -1, last = -1
                    for x in 0..<width where a[row + x] != b[row + x] {
                        if first < 0 { first = x }
                        last = x
                    }
                    guard first >= 0 else { continue }
                    minX = min(minX, first); maxX = max(maxX, last)
                    if minY > y { minY = y }
                    maxY = y
                }
                guard maxX >= 0 else { return CanvasRect(x: 0, y: 0, width: 1, height: 1) }
                return CanvasRect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
            }
        }
    }

    private static func writeGraphicsControl(disposal: Int32, delay: Int, transparentIndex: Int?,
                                             to file: UnsafeMutablePointer<GifFileType>) throws {
        var block = GraphicsControlBlock(DisposalMode: disposal, UserInputFlag: false, DelayTime: Int32(delay),
                                         TransparentColor: transparentIndex.map { Int32($0) } ?? NO_TRANSPARENT_COLOR)
        var bytes = [GifByteType](repeating: 0, count: 4)
        let length = EGifGCBToExtension(&block, &bytes)
        try check(EGifPutExtension(file, GRAPHICS_EXT_FUNC_CODE, Int32(length), bytes), file)
    }

    /// The `NETSCAPE2.0` application extension: how many times the animation plays (0: forever).
    private static func writeLoopCount(_ count: Int, to file: UnsafeMutablePointer<GifFileType>) throws {
        try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), file)
        try check(EGifPutExtensionBlock(file, 11, Array("NETSCAPE2.0".utf8)), file)
        try check(EGifPutExtensionBlock(file, 3, [1, UInt8(count & 0xFF), UInt8(count >> 8)]), file)
        try check(EGifPutExtensionTrailer(file), file)
    }

    /// The `ICCRGBG1` application extension with `profile` in its sub-blocks.
    private static func writeProfile(_ profile: Data?, to file: UnsafeMutablePointer<GifFileType>) throws {
        guard let profile, !profile.isEmpty else { return }
        try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), file)
        try check(EGifPutExtensionBlock(file, 11, Array("ICCRGBG1012".utf8)), file)
        var start = profile.startIndex
        while start < profile.endIndex {
            let chunk = Array(profile[start..<min(start + 255, profile.endIndex)])
            try check(EGifPutExtensionBlock(file, Int32(chunk.count), chunk), file)
            start += chunk.count
        }
        try check(EGifPutExtensionTrailer(file), file)
    }

    /// Runs `body` with a giflib colour map of `palette` (RGB triples), padded with black to the
    /// power of two GIF stores.
    private static func withColorMap(_ palette: [UInt8], _ body: (UnsafeMutablePointer<ColorMapObject>) throws -> Void) throws {
        let count = max(1, palette.count / 3)
        var size = 2
        while size < count { size *= 2 }
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: size)
        for index in 0..<min(count, palette.count / 3) {
            colors[index] = GifColorType(Red: palette[index * 3], Green: palette[index * 3 + 1], Blue: palette[index * 3 + 2])
        }
        guard let map = GifMakeMapObject(Int32(size), colors) else { throw WebImageError.encodingFailed("GIF: cannot make a colour map") }
        defer { GifFreeMapObject(map) }
        try body(map)
    }

    private static func writeRows(_ indices: inout [UInt8], width: Int, height: Int, to file: UnsafeMutablePointer<GifFileType>) throws {
        try indices.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { throw WebImageError.encodingFailed("GIF: no pixels") }
            for row in 0..<height {
                try check(EGifPutLine(file, base + row * width, Int32(width)), file)
            }
        }
    }

    private static func check(_ result: Int32, _ file: UnsafeMutablePointer<GifFileType>) throws {
        guard result == GIF_OK else { throw error(code: file.pointee.Error) }
    }

    static func error(code: Int32) -> WebImageError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "GIF error \(code)"
        if code == E_GIF_ERR_NOT_ENOUGH_MEM || code == E_GIF_ERR_DATA_TOO_BIG { return .tooLarge("GIF: \(message)") }
        return .encodingFailed("GIF: \(message)")
    }
}
