import Testing
@testable import WebImage

@Suite struct ResizeTransformerTests {
    private func size(_ source: (Int, Int), _ target: (Int, Int), _ mode: ResizeTransformer.Mode,
                      upscale: Bool = false) throws -> [Int] {
        let image = TestImages.image(try Bitmap(width: source.0, height: source.1, filledWith: (10, 20, 30, 255)))
        let resized = try ResizeTransformer(width: target.0, height: target.1, mode: mode,
                                            allowUpscaling: upscale).transform(image)
        return [resized.width, resized.height]
    }

    @Test func fitKeepsAspectInsideTarget() throws {
        #expect(try size((400, 200), (100, 100), .fit) == [100, 50])
        #expect(try size((200, 400), (100, 100), .fit) == [50, 100])
        #expect(try size((333, 77), (100, 100), .fit) == [100, 23])
        #expect(try size((77, 333), (50, 200), .fit) == [46, 200])
        #expect(try size((100, 1), (50, 50), .fit) == [50, 1])
        #expect(try size((1, 1), (100, 50), .fit) == [1, 1])
        #expect(try size((1, 1), (100, 50), .fit, upscale: true) == [50, 50])
        #expect(try size((50, 20), (100, 100), .fit) == [50, 20])
        #expect(try size((50, 20), (100, 100), .fit, upscale: true) == [100, 40])
    }

    @Test func fillIsExactlyTheTargetWhenShrinking() throws {
        #expect(try size((400, 200), (100, 100), .fill) == [100, 100])
        #expect(try size((333, 77), (50, 50), .fill) == [50, 50])
        #expect(try size((333, 77), (100, 100), .fill) == [77, 77])
        #expect(try size((77, 333), (30, 20), .fill) == [30, 20])
        #expect(try size((1, 1), (30, 20), .fill) == [1, 1])
        #expect(try size((1, 1), (30, 20), .fill, upscale: true) == [30, 20])
        // Too small to fill without upscaling: the largest centered square, at its own size.
        #expect(try size((50, 20), (100, 100), .fill) == [20, 20])
        #expect(try size((50, 20), (100, 100), .fill, upscale: true) == [100, 100])
    }

    @Test func exactStretches() throws {
        #expect(try size((400, 200), (30, 70), .exact) == [30, 70])
        #expect(try size((20, 10), (30, 5), .exact) == [20, 5])
        #expect(try size((20, 10), (30, 5), .exact, upscale: true) == [30, 5])
        #expect(try size((1, 1), (1, 1), .exact) == [1, 1])
    }

    @Test func fillCropsTheCenter() throws {
        // 8×4 quadrants, filled into a square: the middle 4×4 keeps all four quadrants.
        let quadrants = TestImages.image(try TestImages.quadrants(width: 8, height: 4))
        let square = try ResizeTransformer(width: 2, height: 2, mode: .fill, filter: .box).transform(quadrants)
        #expect(TestImages.rgba(square.bitmap, 0, 0) == [255, 0, 0, 255])
        #expect(TestImages.rgba(square.bitmap, 1, 0) == [0, 255, 0, 255])
        #expect(TestImages.rgba(square.bitmap, 0, 1) == [0, 0, 255, 255])
        #expect(TestImages.rgba(square.bitmap, 1, 1) == [255, 255, 255, 255])
        // Three vertical bands: the centered square is the green one only.
        let bands = TestImages.image(try TestImages.bitmap(width: 12, height: 4) { x, _ in
            x < 4 ? (255, 0, 0, 255) : x < 8 ? (0, 255, 0, 255) : (0, 0, 255, 255)
        })
        let middle = try ResizeTransformer(width: 1, height: 1, mode: .fill, filter: .box).transform(bands)
        #expect(TestImages.rgba(middle.bitmap, 0, 0) == [0, 255, 0, 255])
        // Without upscaling a small image is cropped, not resampled: exact source pixels.
        let coordinates = TestImages.image(try TestImages.coordinates(width: 10, height: 4))
        let cropped = try ResizeTransformer(width: 50, height: 50, mode: .fill).transform(coordinates)
        #expect(cropped.width == 4 && cropped.height == 4)
        #expect(TestImages.rgba(cropped.bitmap, 0, 0) == [3, 0, 77, 255])
        #expect(TestImages.rgba(cropped.bitmap, 3, 3) == [6, 3, 77, 255])
    }

    @Test func imagesInsideTheTargetAreReturnedAsTheyAre() throws {
        let image = TestImages.image(try TestImages.coordinates(width: 30, height: 20))
        let same = try ResizeTransformer(width: 100, height: 100).transform(image)
        #expect(same.bitmap.pixels === image.bitmap.pixels)
    }

    @Test func framesKeepTheirDurations() throws {
        let animation = try TestImages.animation(width: 40, height: 20)
        let resized = try ResizeTransformer(width: 10, height: 10, mode: .fill).transform(animation)
        #expect(resized.frames.count == 3 && resized.durations == [0.1, 0.2, 0.3] && resized.loopCount == 2)
        #expect(resized.frames.allSatisfy { $0.bitmap.width == 10 && $0.bitmap.height == 10 })
    }

    @Test func badTargetsAreTypedErrors() throws {
        let image = TestImages.image(try TestImages.coordinates(width: 4, height: 4))
        #expect(throws: WebImageError.self) { try ResizeTransformer(width: 0, height: 10).transform(image) }
        #expect(throws: WebImageError.self) { try ResizeTransformer(width: 10, height: -1, mode: .fill).transform(image) }
        #expect(throws: WebImageError.self) {
            try ResizeTransformer(width: Int.max, height: Int.max, mode: .exact, allowUpscaling: true).transform(image)
        }
        #expect(throws: WebImageError.self) {
            try Resampler.resize(image.bitmap, width: Int.max / 2, height: 3)
        }
    }

    /// Large resizes run on two threads, one band of rows each: the bands must meet without a seam.
    @Test(arguments: ResamplingFilter.allCases)
    func twoThreadsGiveTheSamePixelsAsOne(_ filter: ResamplingFilter) throws {
        let source = try TestImages.coordinates(width: 157, height: 131)
        for (width, height) in [(80, 67), (40, 2), (300, 3), (157, 250), (1, 90)] {
            let one = try Resampler.resize(source, width: width, height: height, filter: filter, twoThreadsFrom: .max)
            let two = try Resampler.resize(source, width: width, height: height, filter: filter, twoThreadsFrom: 0)
            let same = one.withUnsafeBytes { a in two.withUnsafeBytes { b in a.elementsEqual(b) } }
            #expect(same, "\(filter) \(width)×\(height)")
        }
    }

    /// `fill` resamples its crop where it lies in the source instead of copying it out first:
    /// the pixels must be those of the copy's resize, in one band or two.
    @Test(arguments: [Int.max, 0])
    func aRegionResizesAsItsCroppedCopy(twoThreadsFrom: Int) throws {
        let source = try TestImages.coordinates(width: 157, height: 131)
        for (region, width, height) in [(PixelRegion(x: 13, y: 0, width: 131, height: 131), 60, 60),
                                        (PixelRegion(x: 0, y: 20, width: 157, height: 90), 50, 29),
                                        (PixelRegion(x: 100, y: 100, width: 57, height: 31), 57, 31),
                                        (PixelRegion(x: 1, y: 2, width: 3, height: 4), 9, 12)] {
            let copy = try source.cropped(x: region.x, y: region.y, width: region.width, height: region.height)
            let expected = try Resampler.resize(copy, width: width, height: height, filter: .lanczos3, twoThreadsFrom: twoThreadsFrom)
            let inPlace = try Resampler.resize(source, region: region, width: width, height: height, filter: .lanczos3,
                                               twoThreadsFrom: twoThreadsFrom)
            let same = expected.withUnsafeBytes { a in inPlace.withUnsafeBytes { b in a.elementsEqual(b) } }
            #expect(inPlace.width == width && inPlace.height == height && same, "\(region)")
        }
        for outside in [PixelRegion(x: 150, y: 0, width: 8, height: 10), PixelRegion(x: -1, y: 0, width: 5, height: 5),
                        PixelRegion(x: 0, y: 0, width: 0, height: 5), PixelRegion(x: Int.max, y: 0, width: 2, height: 2)] {
            #expect(throws: WebImageError.self) {
                try Resampler.resize(source, region: outside, width: 4, height: 4, filter: .lanczos3, twoThreadsFrom: .max)
            }
        }
    }

    /// A server turns the two-thread split off (it renders one request per core): same pixels.
    @Test func fillOnOneThreadGivesTheSamePixels() throws {
        let image = TestImages.image(try TestImages.bitmap(width: 1200, height: 700) { x, y in
            (UInt8(x & 255), UInt8(y & 255), UInt8((x ^ y) & 255), UInt8(128 + (x + y) % 128))
        })
        var resize = ResizeTransformer(width: 500, height: 500, mode: .fill)
        let split = try resize.transform(image)
        resize.resamplesOnTwoThreads = false
        let single = try resize.transform(image)
        let same = split.bitmap.withUnsafeBytes { a in single.bitmap.withUnsafeBytes { b in a.elementsEqual(b) } }
        #expect(single.width == 500 && single.height == 500 && same)
        // The same pixels: the same transformer, as an equal value and a set member.
        #expect(resize == ResizeTransformer(width: 500, height: 500, mode: .fill))
        #expect(Set([resize, ResizeTransformer(width: 500, height: 500, mode: .fill)]).count == 1)
        #expect(resize != ResizeTransformer(width: 500, height: 500, mode: .fit))
    }

    @Test func identifiersNameEveryParameter() {
        #expect(ResizeTransformer(width: 200, height: 100, mode: .fill).identifier == "resize(200x100,fill,lanczos3)")
        #expect(ResizeTransformer(width: 200, height: 100, filter: .box, allowUpscaling: true).identifier
                == "resize(200x100,fit,box,upscale)")
        var identifiers = Set<String>()
        for mode in ResizeTransformer.Mode.allCases {
            for filter in ResamplingFilter.allCases {
                for upscale in [false, true] {
                    identifiers.insert(ResizeTransformer(width: 10, height: 20, mode: mode, filter: filter,
                                                         allowUpscaling: upscale).identifier)
                }
            }
        }
        identifiers.insert(ResizeTransformer(width: 20, height: 10).identifier)
        #expect(identifiers.count == 3 * 4 * 2 + 1)
    }
}
