import Foundation
import Testing
@testable import WebImage
import WebImageTestSupport

/// The transformers written to give another service's pixels, against that service's own code:
/// thumbor 7.8's C filters (`_bounding_box` for `trim`, `_sharpen`) and libvips 8.18's
/// `find_trim` (what imgproxy's `trim` calls), each run by Python on the same bytes.
@Suite("Trim and wavelet sharpen: thumbor's and libvips' own answers")
struct ServiceFilterReferenceTests {
    /// A `width` × `height` RGBA bitmap: a flat border of `border`, and inside the rectangle
    /// `inner` noise from a fixed seed (some of it close to the border's colour, some transparent).
    static func bordered(width: Int, height: Int, border: (UInt8, UInt8, UInt8, UInt8),
                         inner: (x: Int, y: Int, width: Int, height: Int), seed: UInt64) throws -> Bitmap {
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        return try Bitmap(width: width, height: height) { buffer in
            let bytes = buffer.bindMemory(to: UInt8.self)
            for y in 0..<height {
                for x in 0..<width {
                    let offset = (y * width + x) * 4
                    let inside = x >= inner.x && x < inner.x + inner.width && y >= inner.y && y < inner.y + inner.height
                    if inside, next() > 40 {
                        let near = next() < 64
                        bytes[offset] = near ? border.0 &+ next() % 9 : next()
                        bytes[offset + 1] = near ? border.1 : next()
                        bytes[offset + 2] = near ? border.2 : next()
                        bytes[offset + 3] = next() < 16 ? next() : 255
                    } else {
                        (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]) = border
                    }
                }
            }
        }
    }

    /// White, with dark specks: single pixels (a 3×3 median removes them), 2×2 blocks (each
    /// pixel's window holds four: removed too) and a 3×3 block (kept): only the last is trimmed to.
    static func specks() throws -> Bitmap {
        try Bitmap(width: 60, height: 40) { buffer in
            let bytes = buffer.bindMemory(to: UInt8.self)
            for index in 0..<bytes.count { bytes[index] = 255 }
            let dark: [(Int, Int)] = [(2, 3), (57, 36), (30, 1)] + [(5, 30), (6, 30), (5, 31), (6, 31), (50, 4), (51, 4), (50, 5), (51, 5)]
                + (0..<9).map { (25 + $0 % 3, 18 + $0 / 3) }
            for (x, y) in dark {
                let offset = (y * 60 + x) * 4
                (bytes[offset], bytes[offset + 1], bytes[offset + 2]) = (10, 20, 30)
            }
        }
    }

    static func raw(_ bitmap: Bitmap) -> Data { bitmap.withUnsafeBytes { Data($0) } }

    /// Runs `script` with `python`, the bitmap's bytes in a file named by `argv[1]`; its stdout.
    static func run(_ python: String, _ script: String, _ bitmap: Bitmap, _ arguments: [String]) async throws -> Data {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("pixels.raw")
        try raw(bitmap).write(to: file)
        let run = try await ChildProcess.run(python, ["-c", script, file.path, String(bitmap.width), String(bitmap.height)] + arguments)
        try #require(run.status == 0, "python: \(run.stderr)")
        return run.stdout
    }

    static let images: [(Bitmap, String)] = {
        var images: [(Bitmap, String)] = []
        let cases: [(Int, Int, (UInt8, UInt8, UInt8, UInt8), (Int, Int, Int, Int))] = [
            (64, 48, (255, 255, 255, 255), (10, 7, 30, 20)),
            (40, 40, (20, 30, 40, 255), (0, 12, 40, 5)),
            (50, 36, (0, 0, 0, 0), (30, 0, 20, 36)),
            (33, 70, (200, 100, 50, 255), (16, 20, 1, 30)),  // one pixel wide: thumbor finds no box
            (48, 48, (9, 9, 9, 255), (0, 0, 48, 48)),
        ]
        for (index, (width, height, border, inner)) in cases.enumerated() {
            images.append((try! bordered(width: width, height: height, border: border, inner: inner, seed: UInt64(index + 1)),
                           "\(width)x\(height) inner \(inner)"))
        }
        images.append((try! specks(), "specks"))
        return images
    }()

    @Test(.enabled(if: ThumborReference.available, "thumbor 7.8 is not installed (scripts/test.sh makes .build/thumbor-venv)"),
          arguments: ["top-left", "bottom-right"], [0, 3, 20])
    func thumborsTrimFindsThumborsBox(reference: String, tolerance: Int) async throws {
        let script = """
        import sys
        from thumbor.ext.filters import _bounding_box
        data = open(sys.argv[1], "rb").read()
        print(*_bounding_box.apply("RGBA", int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), data))
        """
        for (image, name) in Self.images {
            let output = try await Self.run(try #require(ThumborReference.python), script, image, [reference, String(tolerance)])
            let box = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            try #require(box.count == 4)
            // thumbor crops to (left, top, right + 1, bottom + 1) unless the box is empty.
            var expected: [Int]? = box[2] < box[0] || box[3] < box[1] ? nil : [box[0], box[1], box[2] - box[0] + 1, box[3] - box[1] + 1]
            if expected == [0, 0, image.width, image.height] { expected = nil }
            let trim = ImageTransformers.Trim(reference: reference == "top-left" ? .topLeft : .bottomRight, tolerance: Double(tolerance))
            let ours = trim.bounds(in: image).map { [$0.x, $0.y, $0.width, $0.height] }
            #expect(ours == expected, "\(name), \(reference), \(tolerance): thumbor \(box)")
        }
    }

    @Test(.enabled(if: VipsReference.available, "pyvips 8.18 is not installed (scripts/test.sh makes .build/vips-venv)"),
          arguments: [0.0, 10, 40.5])
    func imgproxysTrimFindsLibvipsBox(threshold: Double) async throws {
        // imgproxy's vips_trim: alpha flattened on magenta, the background the colour given or
        // the flattened image's top-left pixel, then find_trim and the equal cuts.
        let script = """
        import sys, pyvips
        w, h = int(sys.argv[2]), int(sys.argv[3])
        image = pyvips.Image.new_from_memory(open(sys.argv[1], "rb").read(), w, h, 4, "uchar")
        image = image.flatten(background=[255, 0, 255])
        background = image.getpoint(0, 0) if sys.argv[5] == "smart" else [int(sys.argv[5][i:i + 2], 16) for i in (0, 2, 4)]
        left, top, width, height = image.find_trim(threshold=float(sys.argv[4]), background=background)
        for equal_hor, equal_ver in ((False, False), (True, False), (False, True), (True, True)):
            l, t, ww, hh = left, top, width, height
            if equal_hor:
                right = w - l - ww
                diff = right - l
                if diff > 0: ww += diff
                elif diff < 0: l = right; ww -= diff
            if equal_ver:
                bot = h - t - hh
                diff = bot - t
                if diff > 0: hh += diff
                elif diff < 0: t = bot; hh -= diff
            print(l, t, ww, hh)
        """
        for (image, name) in Self.images {
            for color in ["smart", "ffffff", "141e28"] {
                let output = try await Self.run(try #require(VipsReference.python), script, image, [String(threshold), color])
                let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
                try #require(lines.count == 4)
                for (index, line) in lines.enumerated() {
                    let box = line.split(separator: " ").compactMap { Int($0) }
                    // imgproxy keeps the image when the box is empty.
                    var expected: [Int]? = box[2] == 0 || box[3] == 0 ? nil : box
                    if expected == [0, 0, image.width, image.height] { expected = nil }
                    let reference: ImageTransformers.Trim.Reference = color == "smart" ? .topLeft
                        : .color(RGBAColor(red: UInt8(color.prefix(2), radix: 16)!, green: UInt8(color.dropFirst(2).prefix(2), radix: 16)!,
                                           blue: UInt8(color.suffix(2), radix: 16)!))
                    let trim = ImageTransformers.Trim(reference: reference, tolerance: threshold,
                                                      measure: .smoothedChannels(flattenedOn: RGBAColor(red: 255, green: 0, blue: 255)),
                                                      equalHorizontal: index & 1 == 1, equalVertical: index >= 2)
                    let ours = trim.bounds(in: image).map { [$0.x, $0.y, $0.width, $0.height] }
                    #expect(ours == expected, "\(name), \(color), equal \(index): libvips \(box)")
                }
            }
        }
    }

    @Test(.enabled(if: ThumborReference.available, "thumbor 7.8 is not installed (scripts/test.sh makes .build/thumbor-venv)"),
          arguments: [(1.0, 0.5, false), (2.5, 1.0, true), (0.8, 3.0, false), (6.0, 0.0, true)])
    func waveletSharpenGivesThumborsPixels(amount: Double, radius: Double, luminanceOnly: Bool) async throws {
        let script = """
        import sys
        from thumbor.ext.filters import _sharpen
        data = open(sys.argv[1], "rb").read()
        sys.stdout.buffer.write(_sharpen.apply("RGBA", int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]),
                                               sys.argv[6] == "1", data))
        """
        // Sides of 32 or more: on smaller ones thumbor's C reads outside its rows.
        let image = try Self.bordered(width: 67, height: 41, border: (128, 64, 32, 255), inner: (5, 5, 60, 30), seed: 7)
        let output = try await Self.run(try #require(ThumborReference.python), script, image,
                                        [String(amount), String(radius), luminanceOnly ? "1" : "0"])
        let ours = Self.raw(try ImageTransformers.WaveletSharpen(amount: amount, radius: radius, luminanceOnly: luminanceOnly)
            .transform(DecodedImage(bitmap: image, hasAlpha: true)).bitmap)
        try #require(output.count == ours.count)
        let differing = zip(output, ours).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) of \(ours.count) bytes differ from thumbor's")
        #expect(ours != Self.raw(image), "the sharpen changed nothing")
    }
}

@Suite("Trim and wavelet sharpen on the smallest images")
struct ServiceFilterEdgeTests {
    /// A render past its deadline sets the stop flag: a trim's search of a flat image (81 reads
    /// a pixel for libvips' rule) ends at once with no box, and a wavelet sharpen throws `cancelled`.
    @Test func aSetStopFlagEndsTheSearchAndTheSharpen() throws {
        let cancellation = DecodeCancellation()
        cancellation.cancel()
        let framed = try ServiceFilterReferenceTests.bordered(width: 200, height: 100, border: (9, 9, 9, 255),
                                                              inner: (50, 20, 100, 60), seed: 5)
        let flat = try Bitmap(width: 64, height: 64, filledWith: (9, 9, 9, 255))
        for measure in [ImageTransformers.Trim.Measure.distance, .smoothedChannels(flattenedOn: .white)] {
            var trim = ImageTransformers.Trim(tolerance: 0, measure: measure)
            #expect(trim.bounds(in: framed) != nil)
            trim.stop = StopFlag(cancellation)
            // Stopped before its first row: no box, where it would have found one.
            #expect(trim.bounds(in: framed) == nil)
        }
        var sharpen = ImageTransformers.WaveletSharpen(amount: 1, radius: 1)
        sharpen.stop = StopFlag(cancellation)
        #expect(throws: WebImageError.cancelled) {
            try sharpen.transform(DecodedImage(bitmap: flat, hasAlpha: false))
        }
    }

    /// Sides of 1 and 2 and runs of one colour: a wavelet level's spacing (up to 16) longer than
    /// the side, a trim with nothing to cut and one that would cut everything. Nothing traps.
    @Test(arguments: [(1, 1), (1, 7), (7, 1), (2, 2), (3, 17), (31, 2)])
    func tinyImagesNeverTrap(width: Int, height: Int) throws {
        let image = DecodedImage(bitmap: try ServiceFilterReferenceTests.bordered(width: width, height: height, border: (0, 0, 0, 255),
                                                                                   inner: (0, 0, width, height), seed: 11), hasAlpha: true)
        let sharpened = try ImageTransformers.WaveletSharpen(amount: 3, radius: 2).transform(image)
        #expect(sharpened.width == width && sharpened.height == height)
        #expect(try ImageTransformers.WaveletSharpen(amount: .greatestFiniteMagnitude, radius: 0, luminanceOnly: true)
            .transform(image).width == width)
        for measure in [ImageTransformers.Trim.Measure.distance, .smoothedChannels(flattenedOn: .white)] {
            for tolerance in [0.0, 1000] {
                let trimmed = try ImageTransformers.Trim(reference: .bottomRight, tolerance: tolerance, measure: measure,
                                                         equalHorizontal: true, equalVertical: true).transform(image)
                #expect(trimmed.width <= width && trimmed.height <= height && trimmed.width > 0)
            }
        }
        let flat = DecodedImage(bitmap: try Bitmap(width: width, height: height, filledWith: (9, 9, 9, 255)), hasAlpha: false)
        #expect(try ImageTransformers.Trim().transform(flat).width == width)
    }
}

@Suite("Pixelate: libvips' own answers")
struct PixelateReferenceTests {
    @Test(.enabled(if: VipsReference.available, "pyvips 8.18 is not installed (scripts/test.sh makes .build/vips-venv)"),
          arguments: [(23, 17, 4), (40, 40, 8), (9, 30, 7), (64, 48, 3), (5, 5, 100), (31, 2, 6)])
    func pixelateGivesLibvipsPixels(width: Int, height: Int, size: Int) async throws {
        // imgproxy's vips_pixelate: mirror to whole blocks, shrink, zoom, cut back.
        let script = """
        import sys, math, pyvips
        w, h, p = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        image = pyvips.Image.new_from_memory(open(sys.argv[1], "rb").read(), w, h, 4, "uchar")
        p = min(p, max(w, h))
        tw, th = math.ceil(w / p) * p, math.ceil(h / p) * p
        if tw > w or th > h: image = image.embed(0, 0, tw, th, extend="mirror")
        image = image.shrink(p, p).zoom(p, p)
        if tw > w or th > h: image = image.extract_area(0, 0, w, h)
        sys.stdout.buffer.write(image.write_to_memory())
        """
        let image = try ServiceFilterReferenceTests.bordered(width: width, height: height, border: (10, 200, 30, 255),
                                                             inner: (1, 1, width - 1, height - 1), seed: UInt64(width * size))
        let output = try await ServiceFilterReferenceTests.run(try #require(VipsReference.python), script, image, [String(size)])
        let ours = ServiceFilterReferenceTests.raw(try ImageTransformers.Pixelate(blockSize: size)
            .transform(DecodedImage(bitmap: image, hasAlpha: true)).bitmap)
        try #require(output.count == ours.count)
        let differing = zip(output, ours).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) of \(ours.count) bytes differ from libvips'")
    }

    @Test func libvipsMeanRoundsAsItsFixedPointReciprocal() {
        // A mean at exactly ½ rounds up for 2, 4, 8 and down for 6; two thirds stay down for 3.
        #expect(ImageTransformers.Pixelate.mean(3, 2) == 2)
        #expect(ImageTransformers.Pixelate.mean(15, 6) == 2)
        #expect(ImageTransformers.Pixelate.mean(149, 3) == 49)
        #expect(ImageTransformers.Pixelate.mean(808, 5) == 161)
    }
}

/// libvips 8.18 through pyvips (PyPI `pyvips` and `pyvips-binary`), the reference for imgproxy's
/// `trim`: `WEBIMAGE_VIPS_PYTHON`, else `.build/vips-venv` (made by `scripts/test.sh`).
enum VipsReference {
    static let python = ReferenceVirtualenv.python(variable: "WEBIMAGE_VIPS_PYTHON", directory: "vips-venv")

    static let available: Bool = python.map {
        (try? ChildProcess.runBlocking($0, ["-c", "import pyvips; assert (pyvips.version(0), pyvips.version(1)) == (8, 18)"]).status) == 0
    } ?? false
}
