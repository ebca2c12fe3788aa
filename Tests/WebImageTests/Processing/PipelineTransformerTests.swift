import Testing
@testable import WebImage

@Suite struct PipelineTransformerTests {
    /// One of each transformer, with parameters that change a 12×8 image.
    static let samples: [any ImageTransformer] = [
        ResizeTransformer(width: 6, height: 6, mode: .fill),
        CropTransformer(x: 1, y: 2, width: 5, height: 4),
        RoundCornerTransformer(radius: 3, borderWidth: 1, borderColor: .white),
        GrayscaleTransformer(),
        FlipTransformer(.horizontal),
        RotateTransformer(degrees: 90),
        RotateTransformer(degrees: 30),
        OrientationTransformer(),
        BlurTransformer(radius: 1.5),
        TintTransformer(color: RGBAColor(red: 0, green: 200, blue: 0, alpha: 100)),
        PipelineTransformer([FlipTransformer(.vertical), ResizeTransformer(width: 4, height: 4)]),
    ]

    @Test func stepsRunInOrder() throws {
        let image = TestImages.image(try TestImages.coordinates(width: 10, height: 6))
        let crop = CropTransformer(x: 0, y: 0, width: 4, height: 2)
        let flip = FlipTransformer(.horizontal)
        let cropThenFlip = try PipelineTransformer([crop, flip]).transform(image)
        let flipThenCrop = try PipelineTransformer([flip, crop]).transform(image)
        #expect(cropThenFlip.bitmap.canonicalRGBA() == (try flip.transform(crop.transform(image))).bitmap.canonicalRGBA())
        #expect(TestImages.rgba(cropThenFlip.bitmap, 0, 0) == [3, 0, 77, 255])
        #expect(TestImages.rgba(flipThenCrop.bitmap, 0, 0) == [9, 0, 77, 255])
        let empty = try PipelineTransformer([]).transform(image)
        #expect(empty.bitmap.pixels === image.bitmap.pixels)
    }

    @Test func identifierJoinsStepsAndNestingFlattens() {
        let resize = ResizeTransformer(width: 100, height: 100, mode: .fill)
        let round = RoundCornerTransformer(radius: 8)
        let pipeline = PipelineTransformer([resize, PipelineTransformer([round, GrayscaleTransformer()])])
        #expect(pipeline.identifier == "resize(100x100,fill,lanczos3)|roundCorners(8)|grayscale(rec709)")
        #expect(pipeline.transformers.count == 3 && !pipeline.transformers.contains { $0 is PipelineTransformer })
        #expect(pipeline.prefix(2).identifier == "resize(100x100,fill,lanczos3)|roundCorners(8)")
        #expect(pipeline.prefix(0).identifier == "" && pipeline.prefix(9).identifier == pipeline.identifier)
        #expect(pipeline.cacheKey(for: "https://x/a.png")
                == "https://x/a.png-resize(100x100,fill,lanczos3)|roundCorners(8)|grayscale(rec709)")
        #expect(PipelineTransformer([]).cacheKey(for: "k") == "k")
        #expect(round.cacheKey(for: "k") == "k-roundCorners(8)")
    }

    @Test func identifiersAreStableAndDistinct() {
        // Written out: these strings end up in disk cache keys, so they must not drift.
        let expected = [
            "resize(6x6,fill,lanczos3)", "crop(1,2,5x4)", "roundCorners(3,all,border:1,#FFFFFFFF)",
            "grayscale(rec709)", "flip(horizontal)", "rotate(90)", "rotate(30)", "orientation", "blur(1.5)",
            "tint(#00C80064)", "flip(vertical)|resize(4x4,fit,lanczos3)",
        ]
        #expect(Self.samples.map(\.identifier) == expected)
        let variants: [any ImageTransformer] = Self.samples + [
            ResizeTransformer(width: 6, height: 7, mode: .fill), CropTransformer(x: 1, y: 2, width: 4, height: 5),
            CropTransformer(x: 2, y: 1, width: 5, height: 4), RoundCornerTransformer(radius: 3),
            RoundCornerTransformer(radius: 3, corners: [.topLeft, .bottomRight]),
            RoundCornerTransformer(radius: 3, borderWidth: 1, borderColor: .black),
            RoundCornerTransformer(radius: 3.5), GrayscaleTransformer(coefficients: .rec601),
            FlipTransformer(.vertical), RotateTransformer(degrees: 30, fitsOriginalSize: true),
            RotateTransformer(degrees: 30.5), BlurTransformer(radius: 2), TintTransformer(color: .white),
            PipelineTransformer([ResizeTransformer(width: 4, height: 4), FlipTransformer(.vertical)]),
        ]
        #expect(Set(variants.map(\.identifier)).count == variants.count)
        #expect(RoundCornerTransformer(radius: 3, corners: [.bottomRight, .topLeft]).identifier
                == "roundCorners(3,topLeft+bottomRight)")
    }

    @Test(arguments: 0..<samples.count)
    func everyFrameIsTransformedAndKeepsItsDuration(_ index: Int) throws {
        let transformer = Self.samples[index]
        var animation = try TestImages.animation(width: 12, height: 8)
        // Orientation is read from the image: give it one to apply.
        animation.orientation = .right
        let result = try transformer.transform(animation)
        #expect(result.frames.count == 3 && result.durations == [0.1, 0.2, 0.3] && result.loopCount == 2)
        // Each frame is what the transformer makes of that frame alone.
        for (frame, transformed) in zip(animation.frames, result.frames) {
            let alone = try transformer.transform(DecodedImage(bitmap: frame.bitmap, orientation: .right, hasAlpha: false))
            #expect(transformed.bitmap.canonicalRGBA() == alone.bitmap.canonicalRGBA(), "\(transformer.identifier)")
        }
        #expect(result.frames[2].bitmap.canonicalRGBA() != animation.frames[2].bitmap.canonicalRGBA(), "\(transformer.identifier)")
    }
}
