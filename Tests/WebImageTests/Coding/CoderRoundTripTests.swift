import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Encoders and decoders against each other, on images drawn in the test (no corpus needed).
@Suite struct CoderRoundTripTests {
    let coders = ImageCodersManager.shared

    private func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in zip(x, y).map { abs(Int($0) - Int($1)) }.max() ?? 0 } }
    }

    @Test func pngIsLossless() throws {
        for (width, height) in [(1, 1), (1000, 3), (37, 23)] {
            for alpha in [false, true] {
                let bitmap = try SampleImages.quadrants(width: width, height: height, transparentCenter: alpha)
                let data = try coders.encode(DecodedImage(bitmap: bitmap, hasAlpha: alpha), format: .png, options: EncodeOptions())
                #expect(ImageFormat.detect(data) == .png)
                let decoded = try coders.decode(data, options: DecodeOptions())
                #expect(decoded.bitmap.canonicalSHA256() == bitmap.canonicalSHA256(), "\(width)x\(height) alpha \(alpha)")
                #expect(decoded.hasAlpha == alpha)
            }
        }
    }

    @Test func jpegIsCloseAtHighQuality() throws {
        let bitmap = try SampleImages.gradient(width: 160, height: 120)
        let data = try coders.encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .jpeg, options: EncodeOptions(quality: 0.95))
        let decoded = try coders.decode(data, options: DecodeOptions())
        #expect(decoded.format == .jpeg && decoded.width == 160 && decoded.height == 120 && !decoded.hasAlpha)
        #expect(maxDifference(decoded.bitmap, bitmap) <= 24, "JPEG at q95 stays within 24 levels on a smooth image")
        let small = try coders.encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .jpeg, options: EncodeOptions(quality: 0.3))
        #expect(small.count < data.count)
    }

    @Test func webPLosslessAndLossy() throws {
        let bitmap = try SampleImages.quadrants(width: 50, height: 40, transparentCenter: true)
        let image = DecodedImage(bitmap: bitmap, hasAlpha: true)
        let lossless = try coders.encode(image, format: .webp, options: EncodeOptions(lossless: true))
        #expect(FormatDetection(lossless).isLossless == true)
        let decoded = try coders.decode(lossless, options: DecodeOptions())
        #expect(decoded.bitmap.canonicalSHA256() == bitmap.canonicalSHA256() && decoded.hasAlpha)
        let gradient = try SampleImages.gradient(width: 96, height: 64)
        let lossy = try coders.encode(DecodedImage(bitmap: gradient, hasAlpha: false), format: .webp, options: EncodeOptions(quality: 0.9))
        #expect(FormatDetection(lossy).isLossless == false)
        #expect(maxDifference(try coders.decode(lossy, options: DecodeOptions()).bitmap, gradient) <= 40)
    }

    @Test func animatedWebPKeepsFramesDurationsAndLoops() throws {
        let frames = try (0..<3).map { index in
            ImageFrame(bitmap: try Bitmap(width: 20, height: 10, filledWith: (UInt8(index * 100), 50, 200, 255)),
                       duration: Double(index + 1) / 10)
        }
        let animation = try DecodedImage(frames: frames, loopCount: 4, hasAlpha: false)
        let data = try coders.encode(animation, format: .webp, options: EncodeOptions(lossless: true))
        #expect(FormatDetection(data).isAnimated)
        let decoded = try coders.decode(data, options: DecodeOptions())
        #expect(decoded.frames.count == 3 && decoded.loopCount == 4)
        #expect(decoded.durations.map { Int(($0 * 1000).rounded()) } == [100, 200, 300])
        #expect(decoded.frames[2].bitmap.pixel(x: 5, y: 5)! == (200, 50, 200, 255))
        let first = try coders.decode(data, options: DecodeOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1)
    }

    @Test func apngBuiltInTheTestComposites() throws {
        // Two frames on a 4×2 canvas: a red background frame, then a half-transparent blue 2×2
        // frame at x = 2 blended over, disposed to background.
        func png(_ bitmap: Bitmap) throws -> Data {
            try coders.encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .png, options: EncodeOptions())
        }
        func chunks(of data: Data) -> [(String, Data)] {
            var result: [(String, Data)] = []
            var offset = 8
            while offset + 12 <= data.count {
                let length = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
                result.append((String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self),
                               Data(data[(offset + 8)..<(offset + 8 + length)])))
                offset += 12 + length
            }
            return result
        }
        func control(_ sequence: UInt32, _ w: UInt32, _ h: UInt32, _ x: UInt32, _ delay: UInt16, dispose: UInt8, blend: UInt8) -> Data {
            var body = Data()
            for value in [sequence, w, h, x, 0] { body.appendBigEndian(value) }
            body.append(contentsOf: [UInt8(delay >> 8), UInt8(delay & 0xFF), 0, 100, dispose, blend])
            return body
        }
        let background = try png(try Bitmap(width: 4, height: 2, filledWith: (255, 0, 0, 255)))
        let overlay = try png(try Bitmap(width: 2, height: 2, filledWith: (0, 0, 255, 128)))
        var apng = Data(PNGCoder.signature)
        let backgroundChunks = chunks(of: background)
        apng.appendChunk("IHDR", backgroundChunks.first { $0.0 == "IHDR" }!.1)
        var animationControl = Data()
        animationControl.appendBigEndian(2)
        animationControl.appendBigEndian(7)
        apng.appendChunk("acTL", animationControl)
        apng.appendChunk("fcTL", control(0, 4, 2, 0, 10, dispose: 0, blend: 0))
        for (type, body) in backgroundChunks where type == "IDAT" { apng.appendChunk("IDAT", body) }
        apng.appendChunk("fcTL", control(1, 2, 2, 2, 20, dispose: 1, blend: 1))
        var sequence: UInt32 = 2
        for (type, body) in chunks(of: overlay) where type == "IDAT" {
            var frameData = Data()
            frameData.appendBigEndian(sequence)
            frameData.append(body)
            apng.appendChunk("fdAT", frameData)
            sequence += 1
        }
        apng.appendChunk("IEND", Data())
        #expect(FormatDetection(apng).isAnimated)
        let decoded = try coders.decode(apng, options: DecodeOptions())
        #expect(decoded.frames.count == 2 && decoded.loopCount == 7)
        #expect(decoded.durations == [0.1, 0.2])
        let blended = try #require(decoded.frames[1].bitmap.pixel(x: 3, y: 1))
        #expect(blended.a == 255 && abs(Int(blended.r) - 127) <= 1 && abs(Int(blended.b) - 128) <= 1)
        #expect(decoded.frames[1].bitmap.pixel(x: 0, y: 0)! == (255, 0, 0, 255))
        #expect(try coders.decode(apng, options: DecodeOptions(firstFrameOnly: true)).frames.count == 1)
    }

    @Test func thumbnailsKeepAspectAndUseDCTScaling() throws {
        let photo = try SampleImages.gradient(width: 1600, height: 1200)
        let jpeg = try coders.encode(DecodedImage(bitmap: photo, hasAlpha: false), format: .jpeg, options: EncodeOptions())
        let thumbnail = try coders.decode(jpeg, options: DecodeOptions(maxPixelSize: 256))
        #expect(thumbnail.width == 256 && thumbnail.height == 192)
        // 1600×1200 scaled by the DCT to 1/4 (400×300) still covers 256×192; 1/8 (200×150) does not.
        #expect(JPEGCoder.dctScaledSize(width: 1600, height: 1200, atLeast: (256, 192)) == (400, 300))
        for format in [ImageFormat.png, .webp] {
            let data = try coders.encode(DecodedImage(bitmap: photo, hasAlpha: false), format: format, options: EncodeOptions())
            let small = try coders.decode(data, options: DecodeOptions(maxPixelSize: 100))
            #expect(small.width == 100 && small.height == 75, "\(format)")
        }
    }

    @Test func orientationIsReportedAndAppliedOnRequest() throws {
        // A JPEG with an EXIF APP1 segment saying "turn right" (6), spliced in after SOI.
        let bitmap = try SampleImages.quadrants(width: 40, height: 20)
        let jpeg = try coders.encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .jpeg, options: EncodeOptions(quality: 1))
        var tiff = Data("MM".utf8) + Data([0, 42, 0, 0, 0, 8, 0, 1])
        tiff += Data([0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]) + Data([0, 0, 0, 0])
        let body = Data("Exif\0\0".utf8) + tiff
        var app1 = Data([0xFF, 0xE1, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)])
        app1.append(body)
        let tagged = jpeg.prefix(2) + app1 + jpeg.dropFirst(2)
        let reported = try coders.decode(Data(tagged), options: DecodeOptions())
        #expect(reported.orientation == .right && reported.width == 40)
        let applied = try coders.decode(Data(tagged), options: DecodeOptions(applyOrientation: true))
        #expect(applied.orientation == .up && applied.width == 20 && applied.height == 40)
        #expect(EXIFReader.orientation(inTIFF: tiff) == .right)
        #expect(EXIFReader.orientation(inXMP: Data("<x tiff:Orientation=\"8\"/>".utf8)) == .left)
    }

    @Test func customCoderAddedFirstWins() throws {
        struct Claiming: ImageCoder {
            func canDecode(_ data: Data) -> Bool { true }
            func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
                DecodedImage(bitmap: try Bitmap(width: 1, height: 1, filledWith: (1, 2, 3, 4)), hasAlpha: true)
            }
        }
        let manager = ImageCodersManager()
        let png = try SampleImages.encoded(.png)
        #expect(try manager.decode(png, options: DecodeOptions()).width == 64)
        manager.addCoder(Claiming())
        #expect(try manager.decode(png, options: DecodeOptions()).width == 1)
        manager.removeCoders(ofType: Claiming.self)
        #expect(try manager.decode(png, options: DecodeOptions()).width == 64)
    }
}
