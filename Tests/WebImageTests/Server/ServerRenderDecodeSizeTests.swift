#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// How large the service decodes a source before its one resize: the least the box needs, a
/// JPEG's at a DCT-scaled size, so a 12 MP source for a 300-px thumbnail decodes from its DC
/// coefficients and the decoder resamples nothing of its own.
@Suite("webimage serve: decode size")
struct ServerRenderDecodeSizeTests {
    private func side(_ query: String, _ width: Int, _ height: Int, jpeg: Bool = true) throws -> Int? {
        let parameters = try ImageParameters(query: "url=http%3A%2F%2Fexample.com%2Fa.jpg&" + query)
        return ImageRenderer.decodeSide(parameters, sourceSize: (width, height), isJPEG: jpeg)
    }

    @Test func jpegsDecodeAtTheSmallestDCTScaleThatCoversTheBox() throws {
        // 12 MP for a 300×300 cover: 1/8 (500×375 covers 400×300); the box's side alone said 600.
        #expect(try side("w=300&h=300&fit=cover", 4000, 3000) == 500)
        // 1 MP for the same: 1/2 (578×433 covers 400×300); 1/4 (289×217) does not.
        #expect(try side("w=300&h=300&fit=cover", 1155, 866) == 578)
        #expect(try side("w=300&h=300", 4000, 3000) == 500)
        #expect(try side("w=300&h=300&fit=fill", 4000, 3000) == 500)
        #expect(try side("w=300", 4000, 3000) == 500)
        #expect(try side("h=300", 1155, 866) == 578)
        // Too little to scale by 1/2: the full size.
        #expect(try side("w=900&h=900&fit=cover", 1155, 866) == nil)
    }

    @Test func theBoxIsWeighedBothWaysForTheEXIFOrientation() throws {
        // A wide box on a stored landscape picture that EXIF may turn upright: turned, 300 across
        // needs a tenth of 3000 (or a sixth of 1800), more than unturned.
        #expect(try side("w=300&h=100&fit=cover", 4000, 3000) == 500)
        #expect(try side("w=300&h=100&fit=cover", 2400, 1800) == 600)
    }

    @Test func otherFormatsDecodeToTheNeededSideAndNoBoxMeansFullSize() throws {
        #expect(try side("w=300&h=300&fit=cover", 4000, 3000, jpeg: false) == 401)
        #expect(try side("", 4000, 3000) == nil)
        #expect(try side("w=8000&enlarge=1", 4000, 3000) == nil)
        #expect(try side("w=300&h=300&fit=cover", 200, 100) == nil)
    }

    @Test func thumbnailsFromTheSmallDecodeMatchOnesFromTheFullSize() throws {
        let source = try SampleImages.encoded(.jpeg, width: 1280, height: 960)
        let parameters = try ImageParameters(query: "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=150&h=150&fit=cover&format=png")
        let renderer = ImageRenderer(coders: .shared, maxSourcePixels: 1 << 26, animationByteLimit: 1 << 26)
        let rendered = try renderer.render(source, sourceValidators: "v", parameters: parameters, choice: .png)
        let fast = try ImageCodersManager.shared.decode(rendered.body, options: DecodeOptions())
        let full = try ImageCodersManager.shared.decode(source, options: DecodeOptions())
        let reference = try ImageTransformers.Resize(width: 150, height: 150, mode: .fill).transform(full)
        #expect((fast.width, fast.height) == (150, 150))
        let a: [UInt8] = fast.bitmap.withUnsafeBytes { [UInt8]($0) }
        let b: [UInt8] = reference.bitmap.withUnsafeBytes { [UInt8]($0) }
        var difference = 0
        for (x, y) in zip(a, b) { difference += abs(Int(x) - Int(y)) }
        #expect(Double(difference) / Double(a.count) < 3, "mean absolute difference per channel")
    }
}
