import Foundation
import Testing
@testable import WebImage

/// Blur, sharpen, watermark and flatten against Pillow (`GaussianBlur`, `UnsharpMask`,
/// `alpha_composite`), and the progressive encodings.
@Suite struct EffectTransformerTests {
    /// `Blur` is Pillow's `GaussianBlur(sigma)` within a mean of 1.5 and a maximum of 12 per
    /// channel: Pillow approximates the Gaussian with three box passes of fractional widths; ours
    /// is an exact kernel below sigma 2 and three odd-width boxes from 2. The unblurred picture
    /// is far from it.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), arguments: [0.5, 1.0, 2.5, 6.0])
    func blurMatchesGaussianBlur(sigma: Double) throws {
        let bitmap = try PillowTransformOracle.texture(width: 80, height: 60)
        let ours = try ImageTransformers.Blur(radius: sigma).transform(TestImages.image(bitmap)).bitmap
        let pillow = try PillowTransformOracle.run("emit(images[0].filter(ImageFilter.GaussianBlur(\(sigma))))", [bitmap])
        let mean = try #require(PixelDifference.mean(ours, pillow))
        let maximum = try #require(PixelDifference.maximum(ours, pillow))
        #expect(mean < 1.5 && maximum <= 12, "sigma \(sigma): mean \(mean), max \(maximum)")
        #expect(try #require(PixelDifference.mean(bitmap, pillow)) > 3 * max(mean, 1))
    }

    /// `Sharpen` is Pillow's `UnsharpMask(sigma, 150, 3)` within a mean of 1.5 and a maximum
    /// of 16 per channel (the blur differs as above, amplified 1.5 times).
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), arguments: [0.5, 1.0, 3.0])
    func sharpenMatchesUnsharpMask(sigma: Double) throws {
        let bitmap = try PillowTransformOracle.texture(width: 80, height: 60)
        let ours = try ImageTransformers.Sharpen(sigma: sigma).transform(TestImages.image(bitmap)).bitmap
        let pillow = try PillowTransformOracle.run(
            "emit(images[0].filter(ImageFilter.UnsharpMask(radius=\(sigma), percent=150, threshold=3)))", [bitmap])
        let mean = try #require(PixelDifference.mean(ours, pillow))
        let maximum = try #require(PixelDifference.maximum(ours, pillow))
        #expect(mean < 1.5 && maximum <= 16, "sigma \(sigma): mean \(mean), max \(maximum)")
        #expect(try #require(PixelDifference.mean(bitmap, pillow)) > 2 * max(mean, 0.5))
        #expect(ImageTransformers.Sharpen(sigma: 1).identifier == "sharpen(1,1.5,3)")
    }

    /// The watermark at half opacity, a quarter of the width (its own size here, so nothing is
    /// resampled), 2 % of the shorter side from the bottom-right corner, is Pillow's
    /// `alpha_composite` of the mark with its alpha halved, within 2 per channel.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func watermarkMatchesAlphaComposite() throws {
        let base = try PillowTransformOracle.texture(width: 200, height: 100)
        let mark = try TestImages.bitmap(width: 50, height: 20) { x, y in
            (UInt8(x * 5), 255, UInt8(y * 12), UInt8(x < 25 ? 255 : 120))
        }
        let cases: [(ImageTransformers.Gravity, (Int, Int))] = [(.bottomRight, (148, 78)), (.topLeft, (2, 2)), (.center, (75, 40))]
        for (gravity, (x, y)) in cases {
            let ours = try ImageTransformers.Watermark(mark: mark, markName: "test", opacity: 0.5, gravity: gravity, widthFraction: 0.25)
                .transform(TestImages.image(base)).bitmap
            let pillow = try PillowTransformOracle.run("""
                base, mark = images
                mark.putalpha(mark.getchannel("A").point(lambda a: round(a * 0.5)))
                base.alpha_composite(mark, dest=(\(x), \(y)))
                emit(base)
                """, [base, mark])
            let maximum = try #require(PixelDifference.maximum(ours, pillow))
            #expect(maximum <= 2, "\(gravity.name): max \(maximum)")
        }
        // Scaled: a 400-wide image gets a 100-wide mark.
        let wide = try ImageTransformers.Watermark(mark: mark, markName: "test", gravity: .topLeft)
            .transform(TestImages.image(try Bitmap(width: 400, height: 200, filledWith: (0, 0, 0, 255)))).bitmap
        // Scaled 2×: 100×40 from a margin of 4 (2 % of 200); opaque green inside, black outside.
        #expect((wide.pixel(x: 4 + 2, y: 4 + 37)?.g ?? 0) >= 250 && wide.pixel(x: 4 + 2, y: 4 + 41)?.g == 0)
        #expect(wide.pixel(x: 4 + 101, y: 4 + 20)?.g == 0 && wide.pixel(x: 2, y: 20)?.g == 0)
    }

    /// Flatten is Pillow's `alpha_composite` over a solid colour, within 1.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func flattenMatchesCompositeOnColour() throws {
        let bitmap = try PillowTransformOracle.texture(width: 40, height: 30, alpha: true)
        var image = TestImages.image(bitmap)
        image.hasAlpha = true
        let flat = try ImageTransformers.Flatten(color: RGBAColor(red: 0, green: 128, blue: 255)).transform(image)
        #expect(flat.hasAlpha == false)
        let pillow = try PillowTransformOracle.run(
            "emit(Image.alpha_composite(Image.new('RGBA', images[0].size, (0, 128, 255, 255)), images[0]))", [bitmap])
        #expect(try #require(PixelDifference.maximum(flat.bitmap, pillow)) <= 1)
    }

    /// `progressive` writes a JPEG with a progressive frame (SOF2, `FF C2`) and no baseline
    /// one (SOF0), and a PNG whose header says Adam7; without it, neither.
    @Test func progressiveEncodings() throws {
        let image = TestImages.image(try PillowTransformOracle.texture(width: 64, height: 48))
        let coders = ImageCodersManager.shared
        let progressive = try coders.encode(image, format: .jpeg, options: EncodeOptions(quality: 0.8, progressive: true))
        let baseline = try coders.encode(image, format: .jpeg, options: EncodeOptions(quality: 0.8))
        func hasMarker(_ data: Data, _ marker: UInt8) -> Bool {
            data.withUnsafeBytes { Array(JPEGMarkerWalker($0)).contains { $0.marker == marker } }
        }
        #expect(hasMarker(progressive, 0xC2) && !hasMarker(progressive, 0xC0))
        #expect(hasMarker(baseline, 0xC0) && !hasMarker(baseline, 0xC2))
        #expect(try coders.decode(progressive, options: DecodeOptions()).width == 64)
        let interlaced = try coders.encode(image, format: .png, options: EncodeOptions(progressive: true))
        let plain = try coders.encode(image, format: .png, options: EncodeOptions())
        // IHDR's interlace method is the 13th byte of its data: 8 signature + 8 length/type + 12.
        #expect(interlaced[28] == 1 && plain[28] == 0)
        let decoded = try coders.decode(interlaced, options: DecodeOptions())
        #expect(PixelDifference.maximum(decoded.bitmap, image.bitmap) == 0)
    }
}
