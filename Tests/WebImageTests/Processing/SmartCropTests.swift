import Foundation
import Testing
@testable import WebImage

/// `SmartCrop` on made pictures: a textured, saturated subject on a flat background, in a
/// corner, which the centre crop misses.
@Suite struct SmartCropTests {
    /// `width` × `height` of flat grey with a `side`-pixel textured red and yellow subject at (`x`, `y`).
    private static func picture(width: Int, height: Int, subject: (x: Int, y: Int, side: Int)) throws -> Bitmap {
        try TestImages.bitmap(width: width, height: height) { x, y in
            let inside = x >= subject.x && x < subject.x + subject.side && y >= subject.y && y < subject.y + subject.side
            guard inside else { return (180, 180, 180, 255) }
            let checker = ((x / 4) + (y / 4)) % 2 == 0
            let noise = UInt8((x * 37 + y * 91) % 40)
            return checker ? (230, 30 + noise, 20, 255) : (250, 220, 10 + noise, 255)
        }
    }

    /// The share of the subject inside the crop a transformer's plan keeps.
    private static func kept(_ crop: (x: Int, y: Int, width: Int, height: Int)?, size: (Int, Int),
                             subject: (x: Int, y: Int, side: Int)) -> Double {
        let crop = crop ?? (0, 0, size.0, size.1)
        let overlapX = max(0, min(crop.x + crop.width, subject.x + subject.side) - max(crop.x, subject.x))
        let overlapY = max(0, min(crop.y + crop.height, subject.y + subject.side) - max(crop.y, subject.y))
        return Double(overlapX * overlapY) / Double(subject.side * subject.side)
    }

    @Test(arguments: [
        // Landscape, subject top-right; landscape, bottom-left; portrait, bottom-right; portrait, top-left.
        (400, 200, 310, 10, 80), (400, 200, 8, 112, 80), (200, 400, 112, 300, 80), (240, 480, 10, 10, 70),
    ])
    func keepsTheSubjectWhereTheCentreLosesIt(width: Int, height: Int, x: Int, y: Int, side: Int) throws {
        let subject = (x: x, y: y, side: side)
        let bitmap = try Self.picture(width: width, height: height, subject: subject)
        let smart = try ImageTransformers.SmartCrop(width: 100, height: 100).resize(for: bitmap)
        let smartKept = Self.kept(try smart.plan(width: width, height: height).crop, size: (width, height), subject: subject)
        let centre = ImageTransformers.Resize(width: 100, height: 100, mode: .fill)
        let centreKept = Self.kept(try centre.plan(width: width, height: height).crop, size: (width, height), subject: subject)
        #expect(smartKept >= 0.9, "smart kept \(smartKept)")
        #expect(centreKept < 0.3, "centre kept \(centreKept)")
        // The transform itself: 100×100, and the subject's colours are in it.
        let result = try ImageTransformers.SmartCrop(width: 100, height: 100).transform(TestImages.image(bitmap)).bitmap
        #expect(result.width == 100 && result.height == 100)
        let saturated = result.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count, by: 4).filter { bytes[$0] > 200 && bytes[$0 + 2] < 100 }.count
        }
        #expect(Double(saturated) >= 0.75 * Double(side * side) * 10_000 / Double(min(width, height) * min(width, height)))
    }

    /// A flat picture has nothing salient: the middle is kept. The same aspect ratio needs no crop.
    @Test func flatPictureKeepsTheMiddle() throws {
        let flat = try Bitmap(width: 300, height: 100, filledWith: (50, 50, 50, 255))
        let resize = try ImageTransformers.SmartCrop(width: 50, height: 50).resize(for: flat)
        #expect(try resize.plan(width: 300, height: 100).crop?.x == 100)
        let same = try ImageTransformers.SmartCrop(width: 150, height: 50).resize(for: flat)
        #expect(try same.plan(width: 300, height: 100).crop == nil)
        #expect(ImageTransformers.SmartCrop(width: 5, height: 6).identifier == "smartCrop(5x6,lanczos3)")
    }
}
