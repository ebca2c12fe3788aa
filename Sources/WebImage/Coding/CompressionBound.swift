/// The most pixels a format's compressed data can expand to, so a declared size that the bytes
/// at hand could never fill is refused before its canvas is allocated: a 200-byte file must not
/// cost hundreds of MB. The bounds are the formats' mathematical maxima, so no valid file is refused.
enum CompressionBound {
    /// LZW (GIF): one 12-bit code emits at most 4096 pixels.
    static let gifPixelsPerByte = 4096 * 8 / 12 + 1
    /// Deflate (PNG) inflates at most 1032:1, and a 1-bit image holds 8 pixels a byte.
    static let pngPixelsPerByte = 1032 * 8
    /// Lossy WebP (VP8): every 16×16 macroblock of a key frame (and every WebP frame is one) codes
    /// its prediction modes with fixed probabilities, at least 2.7 bits; counted as 1 bit here.
    static let vp8PixelsPerByte = 256 * 8
    /// Sizes up to a megapixel (4 MB of RGBA8) are never refused, whatever the file's size.
    static let floorPixels = 1 << 20

    /// Throws ``WebImageError/tooLarge(_:)`` when `width` × `height` pixels cannot come out of
    /// `byteCount` bytes of data that expand at most `pixelsPerByte` pixels a byte.
    static func check(width: Int, height: Int, byteCount: Int, pixelsPerByte: Int, format: String) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        let (fillable, fillableOverflow) = max(0, byteCount).multipliedReportingOverflow(by: pixelsPerByte)
        guard overflow || (!fillableOverflow && pixels > max(floorPixels, fillable)) else { return }
        throw WebImageError.tooLarge("\(format): \(byteCount) bytes of image data cannot fill \(width)×\(height) pixels")
    }

    /// Throws ``WebImageError/tooLarge(_:)`` when a `width` × `height` canvas is larger than all an
    /// animation's frames can paint on it (`paintablePixels`, what each frame can cover, summed):
    /// the rest of such a canvas is only ever background, and allocating and clearing it per frame
    /// is what a tiny file would cost.
    static func check(width: Int, height: Int, paintablePixels: Int, format: String) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard overflow || pixels > max(floorPixels, paintablePixels) else { return }
        throw WebImageError.tooLarge("\(format): the frames can paint \(paintablePixels) of the canvas's \(width)×\(height) pixels")
    }
}
