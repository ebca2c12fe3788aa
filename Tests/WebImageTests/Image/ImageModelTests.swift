import Foundation
import Testing
@testable import WebImage

@Suite struct ImageModelTests {
    @Test func sha256KnownAnswers() {
        #expect(SHA256.hex(of: [UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hex(of: long) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var incremental = SHA256()
        for byte in long { incremental.update([byte]) }
        #expect(incremental.finalizeHex() == SHA256.hex(of: long))
        let million = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(SHA256.hex(of: million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func bitmapCostAndPixels() throws {
        let bitmap = try Bitmap(width: 3, height: 2, filledWith: (1, 2, 3, 255))
        #expect(bitmap.byteCount == 24 && bitmap.bytesPerRow == 12)
        #expect(bitmap.pixel(x: 2, y: 1)! == (1, 2, 3, 255))
        #expect(bitmap.pixel(x: 3, y: 0) == nil)
        #expect(!bitmap.containsTransparency)
        let image = try DecodedImage(frames: [ImageFrame(bitmap: bitmap, duration: 0.1),
                                              ImageFrame(bitmap: bitmap, duration: 0.2)], loopCount: 3, hasAlpha: false)
        #expect(image.cost == 48 && image.isAnimated && image.loopCount == 3)
        #expect(image.firstFrameOnly.frames.count == 1)
        #expect(throws: WebImageError.self) { try DecodedImage(frames: [], hasAlpha: false) }
    }

    @Test func impossibleSizesAreTypedErrors() {
        #expect(throws: WebImageError.self) { try Bitmap(width: 0, height: 5, filledWith: (0, 0, 0, 0)) }
        #expect(throws: WebImageError.self) { try Bitmap(width: Int.max / 2, height: 3) { _ in } }
        #expect(throws: WebImageError.tooLarge("200000×200000 is over the limit of 100000000 pixels")) {
            try DecodeOptions().targetSize(width: 200_000, height: 200_000)
        }
        let scaled = try? DecodeOptions(pixelLimit: 10_000, scaleDownLargeImages: true).targetSize(width: 1000, height: 400)
        #expect(scaled.map { $0.width * $0.height <= 10_000 && $0.width > $0.height } == true)
    }

    @Test func largeBuffersAreReused() throws {
        // A private allocator: the shared one is busy with other suites running in parallel.
        let allocator = PixelAllocator(poolLimit: 16 << 20)
        let first = try allocator.allocate(byteCount: 4 << 20)
        allocator.release(first)
        #expect(allocator.pooledBytes == 4 << 20)
        let second = try allocator.allocate(byteCount: 4_000_000)
        #expect(second.pointer == first.pointer && allocator.pooledBytes == 0)
        allocator.release(second)
        let small = try allocator.allocate(byteCount: 1000)
        allocator.release(small)
        #expect(allocator.pooledBytes == 4 << 20)
        allocator.poolLimit = 0
        #expect(allocator.pooledBytes == 0)
        // Through Bitmap and the shared allocator, a large bitmap still round-trips its pixels.
        let big = try Bitmap(width: 1000, height: 1000, filledWith: (1, 2, 3, 4))
        #expect(big.pixel(x: 999, y: 999)! == (1, 2, 3, 4))
    }

    @Test func orientationTurnsPixels() throws {
        // 2×1: red, green. Orientation 6 (turn clockwise) makes it 1×2: red on top.
        let bitmap = try Bitmap(width: 2, height: 1) { bytes in
            bytes.copyBytes(from: [255, 0, 0, 255, 0, 255, 0, 255])
        }
        let right = try bitmap.applying(.right)
        #expect(right.width == 1 && right.height == 2)
        #expect(right.pixel(x: 0, y: 0)!.r == 255 && right.pixel(x: 0, y: 1)!.g == 255)
        let left = try bitmap.applying(.left)
        #expect(left.pixel(x: 0, y: 0)!.g == 255)
        let mirrored = try bitmap.applying(.upMirrored)
        #expect(mirrored.pixel(x: 0, y: 0)!.g == 255)
        for orientation in ImageOrientation.allCases {
            let turned = try bitmap.applying(orientation)
            #expect(turned.width * turned.height == 2)
        }
    }

    @Test func resamplerKeepsFlatColourAndTransparentEdges() throws {
        let flat = try Bitmap(width: 40, height: 30, filledWith: (200, 100, 50, 255))
        for filter in ResamplingFilter.allCases {
            let small = try Resampler.resize(flat, width: 7, height: 5, filter: filter)
            #expect(small.width == 7 && small.height == 5)
            for y in 0..<5 { for x in 0..<7 { #expect(small.pixel(x: x, y: y)! == (200, 100, 50, 255)) } }
            let large = try Resampler.resize(flat, width: 81, height: 61, filter: filter)
            #expect(large.pixel(x: 40, y: 30)! == (200, 100, 50, 255))
        }
        // Half transparent-black, half opaque red: no dark fringe in the premultiplied result.
        let split = try Bitmap(width: 20, height: 2) { bytes in
            for x in 0..<20 { for y in 0..<2 {
                let o = (y * 20 + x) * 4
                bytes[o] = x < 10 ? 0 : 255; bytes[o + 1] = 0; bytes[o + 2] = 0; bytes[o + 3] = x < 10 ? 0 : 255
            } }
        }
        let shrunk = try Resampler.resize(split, width: 5, height: 1)
        for x in 0..<5 where shrunk.pixel(x: x, y: 0)!.a > 0 { #expect(shrunk.pixel(x: x, y: 0)!.r >= 250) }
    }
}
