import Foundation
import Testing
@testable import WebImage

@Suite struct GeometryTransformerTests {
    @Test func cropTakesTheRectangleAndClipsIt() throws {
        let image = TestImages.image(try TestImages.coordinates(width: 10, height: 10))
        let crop = try CropTransformer(x: 2, y: 3, width: 4, height: 5).transform(image)
        #expect(crop.width == 4 && crop.height == 5)
        for y in 0..<5 { for x in 0..<4 { #expect(TestImages.rgba(crop.bitmap, x, y) == [UInt8(x + 2), UInt8(y + 3), 77, 255]) } }
        let clipped = try CropTransformer(x: 8, y: -3, width: 5, height: 5).transform(image)
        #expect(clipped.width == 2 && clipped.height == 2)
        #expect(TestImages.rgba(clipped.bitmap, 0, 0) == [8, 0, 77, 255])
        let whole = try CropTransformer(x: -5, y: -5, width: 100, height: 100).transform(image)
        #expect(whole.bitmap.pixels === image.bitmap.pixels)
        for outside in [CropTransformer(x: 10, y: 0, width: 5, height: 5), CropTransformer(x: 0, y: 0, width: 0, height: 5),
                        CropTransformer(x: -9, y: 0, width: 9, height: 5), CropTransformer(x: Int.max, y: Int.max, width: Int.max, height: 1),
                        CropTransformer(x: Int.min, y: 0, width: Int.max, height: 1)] {
            #expect(throws: WebImageError.self) { try outside.transform(image) }
        }
        #expect(CropTransformer(x: 10, y: 20, width: 100, height: 50).identifier == "crop(10,20,100x50)")
    }

    @Test func flipMirrorsPixels() throws {
        let source = try TestImages.coordinates(width: 5, height: 3)
        let horizontal = try FlipTransformer(.horizontal).transform(TestImages.image(source)).bitmap
        let vertical = try FlipTransformer(.vertical).transform(TestImages.image(source)).bitmap
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(TestImages.rgba(horizontal, x, y) == TestImages.rgba(source, 4 - x, y))
                #expect(TestImages.rgba(vertical, x, y) == TestImages.rgba(source, x, 2 - y))
            }
        }
        #expect(FlipTransformer(.horizontal).identifier == "flip(horizontal)")
        #expect(FlipTransformer(.vertical).identifier == "flip(vertical)")
    }

    @Test func quarterTurnsMovePixelsExactly() throws {
        let (w, h) = (5, 3)
        let source = try TestImages.coordinates(width: w, height: h)
        let image = TestImages.image(source)
        // Clockwise: the source pixel (sx, sy) lands at (h - 1 - sy, sx).
        let expectations: [(Double, Int, Int, (Int, Int) -> (Int, Int))] = [
            (90, h, w, { x, y in (y, h - 1 - x) }),
            (180, w, h, { x, y in (w - 1 - x, h - 1 - y) }),
            (270, h, w, { x, y in (w - 1 - y, x) }),
            (-90, h, w, { x, y in (w - 1 - y, x) }),
            (450, h, w, { x, y in (y, h - 1 - x) }),
            (360, w, h, { x, y in (x, y) }),
        ]
        for (degrees, width, height, sourceOf) in expectations {
            let turned = try RotateTransformer(degrees: degrees).transform(image)
            #expect(turned.width == width && turned.height == height, "\(degrees)°")
            #expect(!turned.hasAlpha)
            for y in 0..<height {
                for x in 0..<width {
                    let (sx, sy) = sourceOf(x, y)
                    #expect(TestImages.rgba(turned.bitmap, x, y) == TestImages.rgba(source, sx, sy), "\(degrees)° at \(x),\(y)")
                }
            }
        }
        #expect(RotateTransformer(degrees: -90).identifier == RotateTransformer(degrees: 270).identifier)
        #expect(RotateTransformer(degrees: 270).identifier == "rotate(270)")
    }

    @Test func sampledQuarterTurnMatchesTheExactOne() throws {
        // A quarter turn that keeps a non-square size goes through the sampling path: it must
        // agree with the exact turn, centred on the original canvas.
        let source = try TestImages.coordinates(width: 4, height: 2)
        let exact = try source.applying(.right) // 2×4
        let fitted = try RotateTransformer(degrees: 90, fitsOriginalSize: true).transform(TestImages.image(source))
        #expect(fitted.width == 4 && fitted.height == 2 && fitted.hasAlpha)
        for y in 0..<2 {
            for x in 0..<4 {
                if x == 1 || x == 2 {
                    #expect(TestImages.rgba(fitted.bitmap, x, y) == TestImages.rgba(exact, x - 1, y + 1))
                } else {
                    #expect(fitted.bitmap.pixel(x: x, y: y)?.a == 0)
                }
            }
        }
    }

    @Test func arbitraryAnglesEnlargeTheCanvas() throws {
        let square = TestImages.image(try Bitmap(width: 100, height: 100, filledWith: (200, 40, 90, 255)))
        let turned = try RotateTransformer(degrees: 45).transform(square)
        #expect(turned.width == 142 && turned.height == 142 && turned.hasAlpha)
        #expect(turned.bitmap.pixel(x: 0, y: 0)?.a == 0 && turned.bitmap.pixel(x: 141, y: 141)?.a == 0)
        #expect(TestImages.rgba(turned.bitmap, 71, 71) == [200, 40, 90, 255])
        // The turned square's tips touch the middle of each edge.
        #expect((turned.bitmap.pixel(x: 71, y: 1)?.a ?? 0) > 0)
        let wide = try RotateTransformer(degrees: 30).transform(TestImages.image(try Bitmap(width: 30, height: 10, filledWith: (1, 2, 3, 255))))
        let radians = Double.pi / 6
        #expect(wide.width == Int((30 * cos(radians) + 10 * sin(radians)).rounded(.up)))
        #expect(wide.height == Int((30 * sin(radians) + 10 * cos(radians)).rounded(.up)))
        let kept = try RotateTransformer(degrees: 45, fitsOriginalSize: true).transform(square)
        #expect(kept.width == 100 && kept.height == 100)
        #expect(kept.bitmap.pixel(x: 0, y: 0)?.a == 0 && TestImages.rgba(kept.bitmap, 50, 50) == [200, 40, 90, 255])
        #expect(RotateTransformer(degrees: 45, fitsOriginalSize: true).identifier == "rotate(45,fitsOriginalSize)")
        #expect(RotateTransformer(degrees: 22.5).identifier == "rotate(22.5)")
        #expect(throws: WebImageError.self) { try RotateTransformer(degrees: .nan).transform(square) }
    }

    @Test func smallTurnsGoClockwise() throws {
        // Red on the left, blue on the right: turned clockwise, the boundary leans right at the
        // top, so red reaches a pixel near the top that was blue, and blue one near the bottom
        // that was red.
        let source = try TestImages.bitmap(width: 21, height: 21) { x, _ in x < 11 ? (255, 0, 0, 255) : (0, 0, 255, 255) }
        #expect(source.pixel(x: 11, y: 3)?.b == 255 && source.pixel(x: 10, y: 20)?.r == 255)
        let turned = try RotateTransformer(degrees: 10, fitsOriginalSize: true).transform(TestImages.image(source)).bitmap
        #expect(TestImages.rgba(turned, 11, 3) == [255, 0, 0, 255])
        #expect(TestImages.rgba(turned, 10, 20) == [0, 0, 255, 255])
    }

    @Test func orientationMatchesTheExifTable() throws {
        // a b c      stored pixels, named by their red value
        // d e f
        let names: [UInt8] = [1, 2, 3, 4, 5, 6]
        let (a, b, c, d, e, f) = (names[0], names[1], names[2], names[3], names[4], names[5])
        let stored = try TestImages.bitmap(width: 3, height: 2) { x, y in (names[y * 3 + x], 0, 0, 255) }
        // The upright picture for each EXIF value, by rows (from the EXIF 2.3 orientation table).
        let upright: [ImageOrientation: [[UInt8]]] = [
            .up: [[a, b, c], [d, e, f]],
            .upMirrored: [[c, b, a], [f, e, d]],
            .down: [[f, e, d], [c, b, a]],
            .downMirrored: [[d, e, f], [a, b, c]],
            .leftMirrored: [[a, d], [b, e], [c, f]],
            .right: [[d, a], [e, b], [f, c]],
            .rightMirrored: [[f, c], [e, b], [d, a]],
            .left: [[c, f], [b, e], [a, d]],
        ]
        for orientation in ImageOrientation.allCases {
            let image = DecodedImage(bitmap: stored, orientation: orientation, hasAlpha: false)
            let turned = try OrientationTransformer().transform(image)
            let rows = try #require(upright[orientation])
            #expect(turned.orientation == .up)
            #expect(turned.height == rows.count && turned.width == rows[0].count)
            let seen = (0..<turned.height).map { y in (0..<turned.width).map { x in turned.bitmap.pixel(x: x, y: y)?.r ?? 0 } }
            #expect(seen == rows, "EXIF \(orientation.exifValue)")
        }
        #expect(OrientationTransformer().identifier == "orientation")
    }
}
