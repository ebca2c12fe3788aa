@testable import WebImage

/// Bitmaps the processing tests draw themselves.
enum TestImages {
    /// A bitmap whose pixel at (x, y) is `color(x, y)`.
    static func bitmap(width: Int, height: Int,
                       _ color: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) throws -> Bitmap {
        try Bitmap(width: width, height: height) { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let (r, g, b, a) = color(x, y)
                    let o = (y * width + x) * 4
                    bytes[o] = r; bytes[o + 1] = g; bytes[o + 2] = b; bytes[o + 3] = a
                }
            }
        }
    }

    /// Red holds x and green holds y (up to 255), so every pixel says where it came from.
    static func coordinates(width: Int, height: Int) throws -> Bitmap {
        try bitmap(width: width, height: height) { x, y in (UInt8(x), UInt8(y), 77, 255) }
    }

    /// Four quadrants: red top left, green top right, blue bottom left, white bottom right.
    static func quadrants(width: Int, height: Int) throws -> Bitmap {
        try bitmap(width: width, height: height) { x, y in
            switch (x < width / 2, y < height / 2) {
            case (true, true): (255, 0, 0, 255)
            case (false, true): (0, 255, 0, 255)
            case (true, false): (0, 0, 255, 255)
            case (false, false): (255, 255, 255, 255)
            }
        }
    }

    /// A still, opaque image of `bitmap`.
    static func image(_ bitmap: Bitmap) -> DecodedImage {
        DecodedImage(bitmap: bitmap, hasAlpha: false)
    }

    /// Three frames of 0.1, 0.2 and 0.3 s, playing twice, each with different pixels.
    static func animation(width: Int, height: Int) throws -> DecodedImage {
        let frames = try (0..<3).map { index in
            ImageFrame(bitmap: try bitmap(width: width, height: height) { x, y in
                (UInt8((x * 40 + index * 70) % 256), UInt8((y * 30 + index * 50) % 256), UInt8(index * 100), 255)
            }, duration: Double(index + 1) / 10)
        }
        return try DecodedImage(frames: frames, loopCount: 2, format: .gif, hasAlpha: false)
    }

    /// Pixel (x, y) of `bitmap` as an array, for readable comparisons.
    static func rgba(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        guard let p = bitmap.pixel(x: x, y: y) else { return [] }
        return [p.r, p.g, p.b, p.a]
    }
}
