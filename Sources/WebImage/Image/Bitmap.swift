/// One frame's pixels: `width` × `height` straight-alpha RGBA8, rows top to bottom, tightly packed
/// (`bytesPerRow == width * 4`).
///
/// A value type over an immutable ``PixelBuffer``: copying a `Bitmap` or sending it to another
/// task never copies pixels.
public struct Bitmap: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The pixel bytes.
    public let pixels: PixelBuffer

    /// Bytes in one row: always `width * 4`.
    public var bytesPerRow: Int { width * 4 }
    /// Bytes of pixel data, which is also the bitmap's memory cost.
    public var byteCount: Int { pixels.count }

    /// The byte count of a `width` × `height` RGBA8 bitmap, or `nil` when it overflows or a side is
    /// not positive.
    public static func byteCount(width: Int, height: Int) -> Int? {
        guard width > 0, height > 0 else { return nil }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: 4)
        return o1 || o2 ? nil : bytes
    }

    /// Allocates a bitmap and lets `initialize` write all `width * height * 4` bytes.
    /// - Throws: ``WebImageError/tooLarge(_:)`` for sizes that overflow or cannot be allocated,
    ///   ``WebImageError/corruptData(_:)`` for a side that is not positive, or what `initialize` throws.
    public init(width: Int, height: Int,
                initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        guard width > 0, height > 0 else {
            throw WebImageError.corruptData("image size \(width)×\(height)")
        }
        guard let count = Bitmap.byteCount(width: width, height: height) else {
            throw WebImageError.tooLarge("image size \(width)×\(height) overflows")
        }
        self.width = width
        self.height = height
        self.pixels = try PixelBuffer(count: count, initializingWith: initialize)
    }

    /// A bitmap with every pixel set to `rgba` (straight alpha).
    public init(width: Int, height: Int, filledWith rgba: (UInt8, UInt8, UInt8, UInt8)) throws {
        try self.init(width: width, height: height) { buffer in
            let words = buffer.bindMemory(to: UInt8.self)
            var index = 0
            while index < words.count {
                words[index] = rgba.0; words[index + 1] = rgba.1
                words[index + 2] = rgba.2; words[index + 3] = rgba.3
                index += 4
            }
        }
    }

    /// Read-only access to the pixel bytes.
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try pixels.withUnsafeBytes(body)
    }

    /// The straight-alpha RGBA of one pixel (for tests and inspection, not for loops).
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8)? {
        guard x >= 0, y >= 0, x < width, y < height else { return nil }
        return withUnsafeBytes { bytes in
            let offset = y * bytesPerRow + x * 4
            return (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
        }
    }

    /// Whether any pixel is not fully opaque (scans the pixels).
    public var containsTransparency: Bool {
        withUnsafeBytes { bytes in
            var index = 3
            while index < bytes.count {
                if bytes[index] != 255 { return true }
                index += 4
            }
            return false
        }
    }
}
