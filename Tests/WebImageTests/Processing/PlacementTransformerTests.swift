import Foundation
import Testing
@testable import WebImage

/// Gravity, focal point, pad, crop boxes, rotate and flip against Pillow (`ImageOps.fit` with
/// `centering`, `ImageOps.pad`, `crop`, `transpose`).
@Suite(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
struct PlacementTransformerTests {
    typealias Gravity = ImageTransformers.Gravity

    /// Pillow's centering for a named gravity.
    private static let centering: [(Gravity, String)] = [
        (.center, "(0.5, 0.5)"), (.topLeft, "(0, 0)"), (.top, "(0.5, 0)"), (.topRight, "(1, 0)"), (.left, "(0, 0.5)"),
        (.right, "(1, 0.5)"), (.bottomLeft, "(0, 1)"), (.bottom, "(0.5, 1)"), (.bottomRight, "(1, 1)"),
    ]

    /// A cover resize placed by each gravity matches `ImageOps.fit(..., centering=...)` within
    /// a mean of 1 and a maximum of 24 per channel (both Lanczos 3, Pillow's in fixed point;
    /// the maximum is on the crop's edge rows, where Pillow's box resample reads pixels past the
    /// box and ours reads the crop alone); the wrong gravity is far off, so the test can fail.
    @Test(arguments: [((200, 100), (50, 50)), ((120, 240), (60, 40))])
    func coverGravityMatchesImageOpsFit(source: (Int, Int), target: (Int, Int)) throws {
        let bitmap = try PillowTransformOracle.texture(width: source.0, height: source.1)
        var results: [Bitmap] = []
        for (gravity, centering) in Self.centering {
            let ours = try ImageTransformers.Resize(width: target.0, height: target.1, mode: .fill, gravity: gravity)
                .transform(TestImages.image(bitmap)).bitmap
            let pillow = try PillowTransformOracle.run(
                "emit(ImageOps.fit(images[0], (\(target.0), \(target.1)), Image.LANCZOS, centering=\(centering)))", [bitmap])
            let mean = try #require(PixelDifference.mean(ours, pillow))
            let maximum = try #require(PixelDifference.maximum(ours, pillow))
            #expect(mean < 1 && maximum <= 24, "\(gravity.name): mean \(mean), max \(maximum)")
            results.append(ours)
        }
        // Top-left and bottom-right keep different parts.
        #expect(try #require(PixelDifference.mean(results[1], results[8])) > 10)
    }

    /// A focal point centres the crop on it as far as the edges allow: the crop box Pillow cuts
    /// (left = clamp(fx·W − cw/2, 0, W − cw)) and resizes matches ours within the same tolerance.
    @Test func focusCentresTheCoverCrop() throws {
        let bitmap = try PillowTransformOracle.texture(width: 240, height: 120)
        // 240×120 to 60×60: the crop is 120×120.
        for (fx, left) in [(0.1, 0), (0.4, 36), (0.5, 60), (0.75, 120), (1.0, 120)] {
            let ours = try ImageTransformers.Resize(width: 60, height: 60, mode: .fill, gravity: .focus(x: fx, y: 0.5))
                .transform(TestImages.image(bitmap)).bitmap
            let pillow = try PillowTransformOracle.run(
                "emit(images[0].crop((\(left), 0, \(left + 120), 120)).resize((60, 60), Image.LANCZOS))", [bitmap])
            let mean = try #require(PixelDifference.mean(ours, pillow))
            let maximum = try #require(PixelDifference.maximum(ours, pillow))
            #expect(mean < 1 && maximum <= 12, "focus \(fx): mean \(mean), max \(maximum)")
        }
        #expect(ImageTransformers.Resize(width: 6, height: 6, mode: .fill, gravity: .focus(x: 0.25, y: 1)).identifier
            == "resize(6x6,fill,lanczos3,focus(0.25,1))")
        #expect(ImageTransformers.Resize(width: 6, height: 6, mode: .fill).identifier == "resize(6x6,fill,lanczos3)")
    }

    /// Pad is `ImageOps.pad(..., color, centering)`: the contained image and the colour around
    /// it, placed by gravity (sizes with an even free space, so Pillow's rounding agrees).
    @Test func padMatchesImageOpsPad() throws {
        let bitmap = try PillowTransformOracle.texture(width: 200, height: 100)
        for (gravity, centering) in Self.centering {
            let image = try ImageTransformers.Resize(width: 100, height: 100, mode: .fit).transform(TestImages.image(bitmap))
            let ours = try ImageTransformers.Pad(width: 100, height: 100, color: RGBAColor(red: 10, green: 200, blue: 30),
                                                 gravity: gravity).transform(image).bitmap
            let pillow = try PillowTransformOracle.run(
                "emit(ImageOps.pad(images[0], (100, 100), Image.LANCZOS, color=(10, 200, 30, 255), centering=\(centering)))", [bitmap])
            let mean = try #require(PixelDifference.mean(ours, pillow))
            let maximum = try #require(PixelDifference.maximum(ours, pillow))
            #expect(mean < 1 && maximum <= 12, "\(gravity.name): mean \(mean), max \(maximum)")
        }
        // Larger than the canvas: the gravity's part is kept; limits hold before allocating.
        let big = try ImageTransformers.Pad(width: 10, height: 10, gravity: .bottomRight).transform(
            TestImages.image(try TestImages.coordinates(width: 30, height: 20))).bitmap
        #expect(TestImages.rgba(big, 0, 0) == [20, 10, 77, 255])
        #expect(throws: WebImageError.self) { try ImageTransformers.Pad(width: 1 << 20, height: 1 << 20).transform(TestImages.image(bitmap)) }
        #expect(throws: WebImageError.self) { try ImageTransformers.Pad(width: 0, height: 10).transform(TestImages.image(bitmap)) }
    }

    /// A crop placed by gravity cuts Pillow's crop box exactly.
    @Test func cropByGravityIsPillowsBox() throws {
        let bitmap = try PillowTransformOracle.texture(width: 90, height: 70)
        let boxes: [(Gravity, (Int, Int))] = [(.center, (25, 20)), (.topLeft, (0, 0)), (.bottomRight, (50, 40)),
                                              (.right, (50, 20)), (.focus(x: 0.9, y: 0.1), (50, 0))]
        for (gravity, (left, top)) in boxes {
            let ours = try ImageTransformers.Crop(width: 40, height: 30, gravity: gravity).transform(TestImages.image(bitmap)).bitmap
            let pillow = try PillowTransformOracle.run("emit(images[0].crop((\(left), \(top), \(left + 40), \(top + 30))))", [bitmap])
            #expect(PixelDifference.maximum(ours, pillow) == 0, "\(gravity.name)")
        }
        #expect(ImageTransformers.Crop(width: 4, height: 3, gravity: .topLeft).identifier == "crop(4x3,top-left)")
    }

    /// Rotations by quarter turns and flips move pixels exactly as Pillow's `transpose`.
    @Test func rotateAndFlipAreExact() throws {
        let bitmap = try PillowTransformOracle.texture(width: 37, height: 23, alpha: true)
        let cases: [(any ImageTransformer, String)] = [
            (ImageTransformers.Rotate(degrees: 90), "ROTATE_270"), (ImageTransformers.Rotate(degrees: 180), "ROTATE_180"),
            (ImageTransformers.Rotate(degrees: 270), "ROTATE_90"), (ImageTransformers.Flip(.horizontal), "FLIP_LEFT_RIGHT"),
            (ImageTransformers.Flip(.vertical), "FLIP_TOP_BOTTOM"),
        ]
        for (transformer, method) in cases {
            let ours = try transformer.transform(TestImages.image(bitmap)).bitmap
            let pillow = try PillowTransformOracle.run("emit(images[0].transpose(Image.Transpose.\(method)))", [bitmap])
            #expect(PixelDifference.maximum(ours, pillow) == 0, "\(transformer.identifier)")
        }
    }

    @Test func gravityNamesRoundTrip() {
        for gravity in Gravity.named { #expect(Gravity(name: gravity.name) == gravity) }
        #expect(Gravity(name: "smart") == nil)
        #expect(Gravity(name: "middle") == nil)
    }
}
