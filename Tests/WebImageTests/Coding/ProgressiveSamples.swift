import Foundation
import WebImageDemo
@testable import WebImage

/// Images for the progressive-decoding tests: photo-like pixels (a gradient with noise, so JPEG
/// and WebP see real entropy), progressive JPEGs and Adam7 PNGs.
enum ProgressiveSamples {
    /// A gradient with ±`noise` of seeded noise on every channel.
    static func photo(width: Int, height: Int, seed: UInt64 = 1, noise: Int = 24) throws -> Bitmap {
        let base = try SampleImages.gradient(width: width, height: height, seed: Int(seed))
        var random = SampleImages.SeededBytes(seed: seed)
        return try base.withUnsafeBytes { source in
            try Bitmap(width: width, height: height) { target in
                var index = 0
                while index < target.count {
                    let bits = random.next()
                    for channel in 0..<3 {
                        let jitter = Int((bits >> (channel * 8)) & 0xFF) % (2 * noise + 1) - noise
                        target[index + channel] = UInt8(clamping: Int(source[index + channel]) + jitter)
                    }
                    target[index + 3] = 255
                    index += 4
                }
            }
        }
    }

    /// A progressive JPEG (libjpeg's default scan script) of a photo-like picture.
    static func progressiveJPEG(width: Int, height: Int, quality: Int32 = 90) throws -> Data {
        try JPEGCoder.encode(photo(width: width, height: height), quality: quality, sampling: .halfBoth, progressive: true)
    }

    /// A baseline JPEG of a photo-like picture.
    static func baselineJPEG(width: Int, height: Int) throws -> Data {
        try JPEGCoder.encode(photo(width: width, height: height), quality: 90, sampling: .halfBoth)
    }

    /// `bitmap` as an 8-bit RGBA PNG, Adam7-interlaced when `interlaced`; the zlib stream uses
    /// stored blocks (our encoder writes no interlaced PNGs, and this needs no zlib).
    static func png(_ bitmap: Bitmap, interlaced: Bool) -> Data {
        var raw: [UInt8] = []
        bitmap.withUnsafeBytes { pixels in
            func appendRows(x0: Int, dx: Int, y0: Int, dy: Int) {
                guard x0 < bitmap.width, y0 < bitmap.height else { return }
                for y in stride(from: y0, to: bitmap.height, by: dy) {
                    raw.append(0) // filter: none
                    for x in stride(from: x0, to: bitmap.width, by: dx) {
                        let offset = (y * bitmap.width + x) * 4
                        raw += [pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3]]
                    }
                }
            }
            if interlaced {
                for (x0, dx, y0, dy) in [(0, 8, 0, 8), (4, 8, 0, 8), (0, 4, 4, 8), (2, 4, 0, 4), (0, 2, 2, 4), (1, 2, 0, 2), (0, 1, 1, 2)] {
                    appendRows(x0: x0, dx: dx, y0: y0, dy: dy)
                }
            } else {
                appendRows(x0: 0, dx: 1, y0: 0, dy: 1)
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let last = offset + count == raw.count
            zlib += [last ? 1 : 0, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + count)]
            offset += count
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        zlib += be32(b << 16 | a)
        var png = Data(PNGCoder.signature)
        func chunk(_ type: String, _ body: [UInt8]) {
            let typed = Data(type.utf8) + Data(body)
            png += Data(be32(UInt32(body.count))) + typed + Data(be32(CRC32.checksum(typed)))
        }
        chunk("IHDR", be32(UInt32(bitmap.width)) + be32(UInt32(bitmap.height)) + [8, 6, 0, 0, interlaced ? 1 : 0])
        // Several IDAT chunks, as encoders write them, so the data arrives chunk by chunk.
        for start in stride(from: 0, to: zlib.count, by: 8_192) {
            chunk("IDAT", Array(zlib[start..<min(start + 8_192, zlib.count)]))
        }
        chunk("IEND", [])
        return png
    }

    private static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// The mean absolute difference per channel between two bitmaps of one size (alpha included).
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                var total = 0
                for index in 0..<x.count { total += abs(Int(x[index]) - Int(y[index])) }
                return Double(total) / Double(x.count)
            }
        }
    }

    /// Whether two bitmaps hold the same pixels.
    static func identical(_ a: Bitmap, _ b: Bitmap) -> Bool {
        a.width == b.width && a.height == b.height && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
    }

    /// How many leading rows of `partial` are opaque and equal to `final`'s (the rows a
    /// row-by-row decoder has shown), and whether every other row is fully transparent.
    static func shownRows(_ partial: Bitmap, final: Bitmap) -> (rows: Int, restTransparent: Bool) {
        partial.withUnsafeBytes { p in
            final.withUnsafeBytes { f in
                let rowBytes = partial.width * 4
                var rows = 0
                while rows < partial.height,
                      p[(rows * rowBytes)..<((rows + 1) * rowBytes)].elementsEqual(f[(rows * rowBytes)..<((rows + 1) * rowBytes)]) {
                    rows += 1
                }
                let rest = p[(rows * rowBytes)...].allSatisfy { $0 == 0 }
                return (rows, rest)
            }
        }
    }

    /// Feeds `data` to `decoder` in prefixes growing by `step` bytes (the last is the whole
    /// file, still not marked complete) and returns each partial image with the bytes it had.
    static func feed(_ decoder: any IncrementalImageDecoder, _ data: Data, step: Int) throws -> [(bytes: Int, image: DecodedImage)] {
        var partials: [(Int, DecodedImage)] = []
        var count = 0
        while count < data.count {
            count = min(data.count, count + step)
            if let image = try decoder.update(with: data.prefix(count), isComplete: false) { partials.append((count, image)) }
        }
        return partials
    }
}
