import Foundation
import Testing
@testable import WebImage

/// The GIF encoder's own quantiser: palette bounds, the transparent entry, exactness for few
/// colours, determinism and the dithering modes; and the changed rectangle of later frames.
@Suite struct ColorQuantizerTests {
    static func whole(_ bitmap: Bitmap) -> CanvasRect { CanvasRect(x: 0, y: 0, width: bitmap.width, height: bitmap.height) }

    /// Palette entry `index` of `result` as RGBA (opaque; the transparent entry as 0,0,0,0).
    static func color(_ result: ColorQuantizer.Result, _ index: Int) -> [UInt8] {
        if index == result.transparentIndex { return [0, 0, 0, 0] }
        return [result.palette[index * 3], result.palette[index * 3 + 1], result.palette[index * 3 + 2], 255]
    }

    /// The mean absolute error per channel of the quantised pixels against the source's.
    static func meanError(_ result: ColorQuantizer.Result, _ bitmap: Bitmap) -> Double {
        var total = 0
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let p = bitmap.pixel(x: x, y: y)!
                let q = color(result, Int(result.indices[y * bitmap.width + x]))
                total += abs(Int(p.r) - Int(q[0])) + abs(Int(p.g) - Int(q[1])) + abs(Int(p.b) - Int(q[2]))
            }
        }
        return Double(total) / Double(bitmap.width * bitmap.height * 3)
    }

    @Test func manyColorsFitTheBoundWithATransparentEntry() throws {
        let photo = try GIFEncoderTests.photoLike()
        let opaque = ColorQuantizer().quantize(photo, region: Self.whole(photo), reserveTransparent: false)
        #expect(opaque.colorCount == 256 && opaque.transparentIndex == nil)
        #expect(opaque.indices.count == photo.width * photo.height)
        #expect(Self.meanError(opaque, photo) <= GIFEncoderTests.photoTolerance)
        let reserved = ColorQuantizer().quantize(photo, region: Self.whole(photo), reserveTransparent: true)
        #expect(reserved.colorCount == 256 && reserved.transparentIndex == 255)
        #expect(!reserved.indices.contains(255))
        // A transparent pixel takes the extra entry by itself.
        let holed = try GIFEncoderTests.bitmap(width: photo.width, height: photo.height) { x, y in
            x == 5 && y == 7 ? (1, 2, 3, 127) : photo.pixel(x: x, y: y).map { ($0.r, $0.g, $0.b, 128) }!
        }
        let result = ColorQuantizer().quantize(holed, region: Self.whole(holed), reserveTransparent: false)
        #expect(result.transparentIndex == 255 && result.colorCount == 256)
        #expect(result.indices.enumerated().allSatisfy { ($0.offset == 7 * photo.width + 5) == ($0.element == 255) })
    }

    /// 256 opaque colours fit exactly; with one transparent pixel more they cannot, and the
    /// median cut takes over with 255 entries.
    @Test func exactUpTo256Colors() throws {
        let colors = try GIFEncoderTests.bitmap(width: 16, height: 16) { x, y in (UInt8(x * 16), UInt8(y * 16), UInt8(x ^ y), 255) }
        let exact = ColorQuantizer().quantize(colors, region: Self.whole(colors), reserveTransparent: false)
        #expect(exact.colorCount == 256 && Self.meanError(exact, colors) == 0)
        let withHole = try GIFEncoderTests.bitmap(width: 17, height: 16) { x, y in
            x == 16 ? (0, 0, 0, 0) : (UInt8(x * 16), UInt8(y * 16), UInt8(x ^ y), 255)
        }
        let cut = ColorQuantizer().quantize(withHole, region: Self.whole(withHole), reserveTransparent: false)
        #expect(cut.colorCount == 256 && cut.transparentIndex == 255)
        #expect(Self.meanError(cut, withHole) > 0)
    }

    @Test(arguments: [ColorQuantizer.Dithering.none, .ordered, .floydSteinberg])
    func ditheringIsDeterministicAndClose(_ dithering: ColorQuantizer.Dithering) throws {
        let photo = try GIFEncoderTests.photoLike()
        let quantizer = ColorQuantizer(dithering: dithering)
        let first = quantizer.quantize(photo, region: Self.whole(photo), reserveTransparent: false)
        let second = quantizer.quantize(photo, region: Self.whole(photo), reserveTransparent: false)
        #expect(first.indices == second.indices && first.palette == second.palette)
        #expect(Self.meanError(first, photo) <= 2 * GIFEncoderTests.photoTolerance)
        if dithering != .none {
            let plain = ColorQuantizer().quantize(photo, region: Self.whole(photo), reserveTransparent: false)
            #expect(plain.indices != first.indices)
        }
        // Through the coder and our decoder.
        let data = try GIFCoder(dithering: dithering).encode(DecodedImage(bitmap: photo, hasAlpha: false), format: .gif, options: EncodeOptions())
        let decoded = try GIFCoder().decode(data, options: DecodeOptions())
        let error = try #require(PixelDifference.mean(decoded.bitmap, photo))
        #expect(error <= 2 * GIFEncoderTests.photoTolerance, "\(dithering): \(error)")
    }

    @Test func regionIsQuantizedAlone() throws {
        let tiles = try GIFEncoderTests.tiles()
        let region = CanvasRect(x: 8, y: 4, width: 10, height: 6)
        let result = ColorQuantizer().quantize(tiles, region: region, reserveTransparent: false)
        #expect(result.indices.count == 60)
        for y in 0..<6 {
            for x in 0..<10 {
                let p = tiles.pixel(x: x + 8, y: y + 4)!
                #expect(Self.color(result, Int(result.indices[y * 10 + x])) == [p.r, p.g, p.b, p.a])
            }
        }
    }

    @Test func changedRectangle() throws {
        func square(at left: Int) throws -> Bitmap {
            try GIFEncoderTests.bitmap(width: 50, height: 40) { x, y in
                (left..<left + 5).contains(x) && (10..<20).contains(y) ? (255, 0, 0, 255) : (0, 0, 255, 255)
            }
        }
        #expect(GIFEncoder.changedRect(from: try square(at: 3), to: try square(at: 20)) == CanvasRect(x: 3, y: 10, width: 22, height: 10))
        #expect(GIFEncoder.changedRect(from: try square(at: 3), to: try square(at: 3)) == CanvasRect(x: 0, y: 0, width: 1, height: 1))
    }
}
