import Testing
@testable import WebImage

@Suite struct PixelTransformerTests {
    @Test func roundCornersClearTheCornersOnly() throws {
        let red = TestImages.image(try Bitmap(width: 40, height: 30, filledWith: (255, 0, 0, 255)))
        let rounded = try RoundCornerTransformer(radius: 10).transform(red)
        let bitmap = rounded.bitmap
        #expect(rounded.hasAlpha && rounded.width == 40 && rounded.height == 30)
        for (x, y) in [(0, 0), (39, 0), (0, 29), (39, 29), (1, 1), (2, 0)] { #expect(bitmap.pixel(x: x, y: y)?.a == 0, "\(x),\(y)") }
        for (x, y) in [(20, 15), (20, 0), (0, 15), (39, 15), (20, 29), (10, 0), (0, 10)] {
            #expect(TestImages.rgba(bitmap, x, y) == [255, 0, 0, 255], "\(x),\(y)")
        }
        // Anti-aliased: the arc has partly covered pixels, in straight alpha (colour kept).
        let partial = (0..<10).flatMap { y in (0..<10).compactMap { x in bitmap.pixel(x: x, y: y) } }
            .filter { $0.a > 0 && $0.a < 255 }
        #expect(!partial.isEmpty && partial.allSatisfy { $0.r == 255 })
        // Only the chosen corners.
        let one = try RoundCornerTransformer(radius: 10, corners: .topLeft).transform(red).bitmap
        #expect(one.pixel(x: 0, y: 0)?.a == 0)
        #expect(one.pixel(x: 39, y: 0)?.a == 255 && one.pixel(x: 0, y: 29)?.a == 255 && one.pixel(x: 39, y: 29)?.a == 255)
        // A radius over half the side makes a circle.
        let circle = try RoundCornerTransformer(radius: 1000).transform(TestImages.image(try Bitmap(width: 21, height: 21, filledWith: (9, 9, 9, 255)))).bitmap
        #expect(circle.pixel(x: 1, y: 1)?.a == 0 && circle.pixel(x: 3, y: 3)?.a == 255 && circle.pixel(x: 10, y: 10)?.a == 255 && circle.pixel(x: 10, y: 0)?.a == 255)
    }

    @Test func roundCornersPaintedWithAColourKeepTheImageOpaque() throws {
        let red = TestImages.image(try Bitmap(width: 40, height: 30, filledWith: (255, 0, 0, 255)))
        let painted = try RoundCornerTransformer(radius: 10, outsideColor: RGBAColor(red: 0, green: 0, blue: 255)).transform(red)
        #expect(!painted.hasAlpha)
        #expect(TestImages.rgba(painted.bitmap, 0, 0) == [0, 0, 255, 255] && TestImages.rgba(painted.bitmap, 39, 29) == [0, 0, 255, 255])
        #expect(TestImages.rgba(painted.bitmap, 20, 15) == [255, 0, 0, 255] && TestImages.rgba(painted.bitmap, 20, 0) == [255, 0, 0, 255])
        // The arc mixes the two.
        let arc = (0..<10).flatMap { y in (0..<10).compactMap { painted.bitmap.pixel(x: $0, y: y) } }.filter { $0.r > 0 && $0.b > 0 }
        #expect(!arc.isEmpty && arc.allSatisfy { $0.a == 255 })
    }

    @Test func anOverlayLandsAtItsPixelPositionClipped() throws {
        let gray = TestImages.image(try Bitmap(width: 10, height: 8, filledWith: (100, 100, 100, 255)))
        let mark = try Bitmap(width: 4, height: 4, filledWith: (255, 0, 0, 255))
        let placed = try ImageTransformers.Overlay(mark: mark, markName: "red", x: 8, y: -2).transform(gray).bitmap
        #expect(TestImages.rgba(placed, 8, 0) == [255, 0, 0, 255] && TestImages.rgba(placed, 9, 1) == [255, 0, 0, 255])
        #expect(TestImages.rgba(placed, 7, 0) == [100, 100, 100, 255] && TestImages.rgba(placed, 8, 2) == [100, 100, 100, 255])
        let outside = try ImageTransformers.Overlay(mark: mark, markName: "red", x: -10, y: 50).transform(gray).bitmap
        #expect(TestImages.rgba(outside, 0, 7) == [100, 100, 100, 255])
    }

    @Test func roundCornerBorderIsInside() throws {
        let red = TestImages.image(try Bitmap(width: 40, height: 30, filledWith: (255, 0, 0, 255)))
        let blue = RGBAColor(red: 0, green: 0, blue: 255)
        let bordered = try RoundCornerTransformer(radius: 8, borderWidth: 2, borderColor: blue).transform(red).bitmap
        #expect(TestImages.rgba(bordered, 20, 0) == [0, 0, 255, 255])
        #expect(TestImages.rgba(bordered, 20, 1) == [0, 0, 255, 255])
        #expect(TestImages.rgba(bordered, 20, 2) == [255, 0, 0, 255])
        #expect(TestImages.rgba(bordered, 0, 15) == [0, 0, 255, 255])
        #expect(TestImages.rgba(bordered, 20, 15) == [255, 0, 0, 255])
        #expect(bordered.pixel(x: 0, y: 0)?.a == 0)
    }

    @Test func roundCornersOnTinyAndTransparentImages() throws {
        for (w, h) in [(1, 1), (1, 7), (7, 1), (2, 2)] {
            let image = TestImages.image(try Bitmap(width: w, height: h, filledWith: (1, 2, 3, 255)))
            let rounded = try RoundCornerTransformer(radius: 3, borderWidth: 5).transform(image)
            #expect(rounded.width == w && rounded.height == h)
        }
        let clear = TestImages.image(try Bitmap(width: 10, height: 10, filledWith: (0, 0, 0, 0)))
        let rounded = try RoundCornerTransformer(radius: 3).transform(clear).bitmap
        #expect(!(0..<10).contains { rounded.pixel(x: $0, y: $0)?.a != 0 })
    }

    @Test func grayscaleEqualizesChannelsAndKeepsAlpha() throws {
        let source = try TestImages.bitmap(width: 16, height: 16) { x, y in (UInt8(x * 16), UInt8(y * 16), UInt8((x * y) % 256), UInt8(255 - x)) }
        for coefficients in GrayscaleTransformer.Coefficients.allCases {
            let gray = try GrayscaleTransformer(coefficients: coefficients).transform(TestImages.image(source)).bitmap
            for y in 0..<16 {
                for x in 0..<16 {
                    let p = try #require(gray.pixel(x: x, y: y))
                    #expect(p.r == p.g && p.g == p.b && p.a == UInt8(255 - x))
                }
            }
        }
        let primaries = try TestImages.bitmap(width: 4, height: 1) { x, _ in
            [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 255, 255)][x]
        }
        let rec709 = try GrayscaleTransformer().transform(TestImages.image(primaries)).bitmap
        #expect((0..<4).map { rec709.pixel(x: $0, y: 0)?.r } == [54, 182, 18, 255])
        let rec601 = try GrayscaleTransformer(coefficients: .rec601).transform(TestImages.image(primaries)).bitmap
        #expect((0..<4).map { rec601.pixel(x: $0, y: 0)?.r } == [76, 150, 29, 255])
        #expect(GrayscaleTransformer().identifier == "grayscale(rec709)")
        #expect(GrayscaleTransformer(coefficients: .rec601).identifier == "grayscale(rec601)")
    }

    @Test func blurKeepsFlatColourAndSpreadsAPoint() throws {
        let flat = TestImages.image(try Bitmap(width: 20, height: 9, filledWith: (120, 30, 200, 255)))
        let blurred = try BlurTransformer(radius: 3).transform(flat).bitmap
        #expect(blurred.canonicalRGBA() == flat.bitmap.canonicalRGBA())
        let point = try TestImages.bitmap(width: 21, height: 21) { x, y in x == 10 && y == 10 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        let spread = try BlurTransformer(radius: 2).transform(TestImages.image(point)).bitmap
        let center = try #require(spread.pixel(x: 10, y: 10)).r
        #expect(center > 0 && center < 255)
        #expect((spread.pixel(x: 12, y: 10)?.r ?? 0) > 0)
        #expect(spread.pixel(x: 12, y: 10)?.r == spread.pixel(x: 8, y: 10)?.r)
        #expect(spread.pixel(x: 10, y: 12)?.r == spread.pixel(x: 12, y: 10)?.r)
        #expect(spread.pixel(x: 0, y: 0)?.r == 0)
        // No dark fringe where transparent black meets opaque red.
        let split = try TestImages.bitmap(width: 20, height: 4) { x, _ in x < 10 ? (0, 0, 0, 0) : (255, 0, 0, 255) }
        let soft = try BlurTransformer(radius: 2).transform(TestImages.image(split)).bitmap
        #expect((soft.pixel(x: 9, y: 1)?.a ?? 0) > 0 && (soft.pixel(x: 10, y: 1)?.a ?? 255) < 255)
        for x in 0..<20 where (soft.pixel(x: x, y: 1)?.a ?? 0) > 0 { #expect((soft.pixel(x: x, y: 1)?.r ?? 0) >= 250) }
        // Radius 0 changes nothing; tiny images survive wide boxes.
        let same = try BlurTransformer(radius: 0).transform(flat)
        #expect(same.bitmap.pixels === flat.bitmap.pixels)
        let tiny = try BlurTransformer(radius: 50).transform(TestImages.image(try Bitmap(width: 1, height: 2, filledWith: (5, 6, 7, 255))))
        #expect(TestImages.rgba(tiny.bitmap, 0, 1) == [5, 6, 7, 255])
    }

    @Test func blurBoxesMatchTheGaussianVariance() {
        for sigma in [0.5, 1, 2, 3.3, 8, 25] {
            let radii = BlurTransformer.boxRadii(sigma: sigma)
            let variance = radii.reduce(0.0) { sum, r in sum + (Double((2 * r + 1) * (2 * r + 1)) - 1) / 12 }
            #expect(abs(variance - sigma * sigma) <= max(0.35, 0.17 * sigma * sigma), "σ \(sigma): \(radii)")
        }
        #expect(BlurTransformer(radius: 4).identifier == "blur(4)")
        #expect(BlurTransformer(radius: 2.5).identifier == "blur(2.5)")
    }

    @Test func tintCoversWhereTheImageIs() throws {
        let source = try TestImages.bitmap(width: 2, height: 1) { x, _ in x == 0 ? (100, 100, 100, 255) : (100, 100, 100, 0) }
        let full = try TintTransformer(color: RGBAColor(red: 255, green: 0, blue: 0)).transform(TestImages.image(source)).bitmap
        #expect(TestImages.rgba(full, 0, 0) == [255, 0, 0, 255])
        #expect(full.pixel(x: 1, y: 0)?.a == 0)
        let half = try TintTransformer(color: RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)).transform(TestImages.image(source)).bitmap
        #expect(TestImages.rgba(half, 0, 0) == [178, 50, 50, 255])
        #expect(TintTransformer(color: RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)).identifier == "tint(#FF000080)")
    }
    /// thumbor's C arithmetic, worked by hand: integer percents of 255 truncated toward zero,
    /// contrast's squared factor, saturation around the perceived brightness.
    @Test func colorAdjustmentsFollowThumborsArithmetic() throws {
        func adjusted(_ steps: [ImageTransformers.ColorAdjust.Step], _ pixel: (UInt8, UInt8, UInt8, UInt8)) throws -> [UInt8] {
            let image = TestImages.image(try Bitmap(width: 2, height: 1, filledWith: pixel))
            return TestImages.rgba(try ImageTransformers.ColorAdjust(steps).transform(image).bitmap, 1, 0)
        }
        #expect(try adjusted([.brightness(percent: 10)], (100, 250, 5, 77)) == [125, 255, 30, 77])
        #expect(try adjusted([.brightness(percent: -10)], (20, 10, 30, 255)) == [0, 0, 5, 255])
        // (20 + 100)² / 100 = 144: 200 → 144 × 72 / 100 + 128 = 231; 100 → −40 + 128 = 88 (toward zero).
        #expect(try adjusted([.contrast(percent: 20)], (200, 100, 0, 255)) == [231, 88, 0, 255])
        #expect(try adjusted([.channels(red: 10, green: -10, blue: 0)], (100, 100, 100, 255)) == [125, 75, 100, 255])
        // √(255² × 0.299) = 139.4…: grey at factor 0.
        #expect(try adjusted([.saturation(factor: 0)], (255, 0, 0, 255)) == [139, 139, 139, 255])
        #expect(try adjusted([.saturation(factor: 1)], (12, 200, 99, 255)) == [12, 200, 99, 255])
        // In order, and huge percents end at the channel's ends without overflowing.
        #expect(try adjusted([.brightness(percent: 10), .contrast(percent: 20)], (100, 100, 100, 255)) == [124, 124, 124, 255])
        #expect(try adjusted([.brightness(percent: .max), .contrast(percent: .min)], (1, 2, 3, 4)) == [255, 255, 255, 4])
        #expect(ImageTransformers.ColorAdjust([.brightness(percent: 10), .contrast(percent: -5)]).identifier == "color(b10,c-5)")
    }
}
