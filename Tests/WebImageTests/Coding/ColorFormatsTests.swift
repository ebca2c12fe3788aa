import Foundation
import Testing
@testable import WebImage

/// Colour management beyond the still JPEG/PNG/WebP files of ColorConversionTests: the matrix/TRC
/// fast path against lcms2 itself, AVIF/HEIF/JPEG XL files made by Debian's own tools with nclx
/// values or an ICC profile, animated APNG/WebP/GIF frames, encoders re-embedding kept profiles.
/// The oracle is Pillow's ImageCms converting our kept-colour decode (saved as a PNG with the
/// expected profile) to sRGB; tolerance 1 per channel, as in ColorConversionTests.
@Suite struct ColorFormatsTests {
    static let adobeRGB = (try? Data(contentsOf: URL(fileURLWithPath: ColorConversionTests.adobeRGBPath))) ?? Data()
    static var hasProfiles: Bool { ColorConversionTests.hasProfiles }

    /// Pillow's ImageCms conversion of `bitmap` taken to be in `profile`.
    static func imageCms(_ bitmap: Bitmap, profile: Data) throws -> PillowOracle.Image? {
        try ColorConversionTests.pillowConverted(try PNGCoder.encodeBitmap(bitmap, keepAlpha: true, iccProfile: profile))
    }

    /// Decodes `data` kept and converted; the kept decode reports `profile`, and the converted
    /// one is ImageCms's conversion of the kept pixels from it, frame by frame.
    static func expectConverted(_ data: Data, profile: Data, _ comment: Comment) throws {
        let kept = try ImageCodersManager.shared.decode(data, options: DecodeOptions(keepsColors: true))
        let converted = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        #expect(kept.iccProfile == profile, comment)
        #expect(converted.iccProfile == nil, comment)
        #expect(kept.frames.count == converted.frames.count, comment)
        for (index, (keptFrame, convertedFrame)) in zip(kept.frames, converted.frames).enumerated() {
            let oracle = try #require(try imageCms(keptFrame.bitmap, profile: profile))
            #expect(ColorConversionTests.maxDifference(convertedFrame.bitmap, oracle) <= 1, "\(comment) frame \(index)")
            #expect(PixelDifference.maximum(keptFrame.bitmap, convertedFrame.bitmap) ?? 0 > 8, "\(comment) frame \(index) changed")
        }
    }

    static func writePNG(_ bitmap: Bitmap, profile: Data? = nil, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.url.appendingPathComponent("in-\(UUID().uuidString).png")
        try PNGCoder.encodeBitmap(bitmap, keepAlpha: false, iccProfile: profile).write(to: url)
        return url
    }

    // MARK: - The fast path

    /// ``MatrixShaperTransform`` gives lcms2's bytes: every 3rd value of each channel, for
    /// profiles from a file, from primaries and gamma, and with tabulated (PQ) curves.
    @Test(.enabled(if: hasProfiles, ColorConversionTests.noProfiles))
    func matrixShaperMatchesLittleCMS() throws {
        let profiles: [(String, Data?)] = [
            ("adobe", Self.adobeRGB),
            ("p3", ColorProfileBuilder.rgbProfile(primaries: .displayP3, transfer: .sRGB)),
            ("bt2020 gamma 1.8", ColorProfileBuilder.rgbProfile(primaries: .bt2020, transfer: .gamma(1.8))),
            ("bt2020 pq", ColorProfileBuilder.nclxProfile(primaries: 9, transfer: 16)),
        ]
        let steps = Array(stride(from: 0, through: 255, by: 3))
        var pixels: [UInt8] = []
        for r in steps { for g in steps { for b in steps { pixels += [UInt8(r), UInt8(g), UInt8(b), UInt8((r + b) & 0xFF)] } } }
        for (name, profile) in profiles {
            let profile = try #require(profile, "\(name)")
            let fast = try #require(ICCTransform(profile: profile, input: .rgba))
            let lcms = try #require(ICCTransform(profile: profile, input: .rgba, matrixShaper: false))
            #expect(fast.isMatrixShaper && !lcms.isMatrixShaper, "\(name)")
            var ours = [UInt8](repeating: 0, count: pixels.count), theirs = ours
            pixels.withUnsafeBytes { source in
                ours.withUnsafeMutableBytes { fast.run(source.baseAddress!, $0.baseAddress!, pixelCount: pixels.count / 4) }
                theirs.withUnsafeMutableBytes { lcms.run(source.baseAddress!, $0.baseAddress!, pixelCount: pixels.count / 4) }
            }
            let worst = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "\(name): \(worst)")
        }
    }

    /// The fast path at its edges: every value of each channel with the others at 0 and at 255
    /// (the most saturated colours, out of sRGB's gamut, where lcms2 clamps), converted in place
    /// and into another buffer, alpha kept.
    @Test(.enabled(if: hasProfiles, ColorConversionTests.noProfiles))
    func matrixShaperMatchesLittleCMSAtTheGamutEdges() throws {
        var pixels: [UInt8] = []
        for channel in 0..<3 {
            for others in [UInt8(0), 255] {
                for value in 0..<256 {
                    var pixel = [others, others, others, UInt8(value ^ 0x5A)]
                    pixel[channel] = UInt8(value)
                    pixels += pixel
                }
            }
        }
        let profiles: [(String, Data?)] = [
            ("adobe", Self.adobeRGB),
            ("bt2020 pq", ColorProfileBuilder.nclxProfile(primaries: 9, transfer: 16)),
        ]
        for (name, profile) in profiles {
            let profile = try #require(profile, "\(name)")
            let fast = try #require(ICCTransform(profile: profile, input: .rgba))
            let lcms = try #require(ICCTransform(profile: profile, input: .rgba, matrixShaper: false))
            var ours = [UInt8](repeating: 0, count: pixels.count), theirs = ours, inPlace = pixels
            pixels.withUnsafeBytes { source in
                ours.withUnsafeMutableBytes { fast.run(source.baseAddress!, $0.baseAddress!, pixelCount: pixels.count / 4) }
                theirs.withUnsafeMutableBytes { lcms.run(source.baseAddress!, $0.baseAddress!, pixelCount: pixels.count / 4) }
            }
            inPlace.withUnsafeMutableBytes { fast.run($0.baseAddress!, $0.baseAddress!, pixelCount: pixels.count / 4) }
            let worst = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "\(name): \(worst)")
            #expect(inPlace == ours, "\(name)")
            #expect(stride(from: 3, to: pixels.count, by: 4).allSatisfy { ours[$0] == pixels[$0] }, "\(name): alpha")
        }
    }

    /// When the row pipeline's second thread does not get to run (its core is busy), the decoding
    /// thread converts the rows itself as it goes, never more than ``RowConversionPipeline/lagBytes``
    /// behind, instead of leaving the whole image, long out of cache, for the end.
    @Test(.enabled(if: hasProfiles, ColorConversionTests.noProfiles))
    func rowPipelineConvertsALateConvertersBacklogWhileDecoding() throws {
        let transform = try #require(ICCTransform(profile: Self.adobeRGB, input: .rgba))
        let (width, height, batch) = (1024, 640, 16)
        let rowBytes = width * 4
        let lagRows = RowConversionPipeline.lagBytes / rowBytes
        let plain: [UInt8] = [40, 200, 90, 255]
        var converted = plain
        plain.withUnsafeBytes { source in converted.withUnsafeMutableBytes { transform.run(source.baseAddress!, $0.baseAddress!, pixelCount: 1) } }
        #expect(converted != plain)
        let heldBack = Locked<[@Sendable () -> Void]>([])
        var buffer = [UInt8](repeating: 0, count: rowBytes * height)
        var worstLag = 0
        try buffer.withUnsafeMutableBytes { buffer in
            try RowConversionPipeline.run(transform, buffer: buffer, rowBytes: rowBytes, parallel: true,
                                          startConverter: { job in heldBack.withLock { $0.append(job) } }) { rowsDone in
                var row = 0
                while row < height {
                    // The rows not converted yet, all decoded before this batch.
                    let unconverted = (0..<row).filter { buffer[$0 * rowBytes + 1] == plain[1] }.count
                    worstLag = max(worstLag, unconverted)
                    for index in row * rowBytes..<min(height, row + batch) * rowBytes { buffer[index] = plain[index % 4] }
                    row = min(height, row + batch)
                    rowsDone(row)
                }
            }
        }
        // The converter starts after all, late: it finds the pipeline closed and returns.
        for job in heldBack.withLock({ $0 }) { job() }
        #expect(worstLag <= lagRows + batch, "\(worstLag) rows left unconverted behind the decoder")
        #expect((0..<height).allSatisfy { Array(buffer[$0 * rowBytes..<$0 * rowBytes + 4]) == converted })
    }

    /// A full-size JPEG with a profile is converted row by row while it decodes, on one thread
    /// or two: the same pixels as ImageCms's conversion of the whole image.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles),
          arguments: [false, true])
    func jpegRowPipelineMatchesImageCms(_ parallel: Bool) throws {
        let bitmap = try PixelDifference.gradient(width: 1200, height: 900, alpha: false)
        let plain = try JPEGCoder.encode(bitmap, quality: 90, sampling: .halfBoth)
        let data = JPEGICCProfile.embedding(Self.adobeRGB, in: plain)
        let image = try JPEGCoder().decode(data, options: DecodeOptions(parallelDecoding: parallel))
        let oracle = try #require(try ColorConversionTests.pillowConverted(data))
        #expect(ColorConversionTests.maxDifference(image.bitmap, oracle) <= 1)
    }

    // MARK: - AVIF, HEIF, JPEG XL

    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles),
          .enabled(if: CodecTool.avifenc.isAvailable, CodecTool.avifenc.absentReason))
    func avifNclxAndICC() throws {
        let directory = try TemporaryDirectory()
        let png = try Self.writePNG(try ColorConversionTests.gradient(), in: directory)
        let p3 = directory.url.appendingPathComponent("p3.avif"), icc = directory.url.appendingPathComponent("icc.avif")
        let adobe = directory.url.appendingPathComponent("adobe.icc")
        try Self.adobeRGB.write(to: adobe)
        try CodecTool.avifenc.run(["--cicp", "12/13/6", "-y", "444", "--min", "0", "--max", "0", "--speed", "10", png.path, p3.path])
        try CodecTool.avifenc.run(["--icc", adobe.path, "-y", "444", "--min", "0", "--max", "0", "--speed", "10", png.path, icc.path])
        try Self.expectConverted(try Data(contentsOf: p3), profile: try #require(ColorProfileBuilder.nclxProfile(primaries: 12, transfer: 13)), "AVIF nclx P3")
        try Self.expectConverted(try Data(contentsOf: icc), profile: Self.adobeRGB, "AVIF ICC")
    }

    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles),
          .enabled(if: CodecTool.heifEnc.isAvailable, CodecTool.heifEnc.absentReason))
    func heifNclxAndICC() throws {
        let directory = try TemporaryDirectory()
        let bitmap = try ColorConversionTests.gradient()
        let plain = try Self.writePNG(bitmap, in: directory), tagged = try Self.writePNG(bitmap, profile: Self.adobeRGB, in: directory)
        _ = plain
        let icc = directory.url.appendingPathComponent("icc.heic")
        try CodecTool.heifEnc.run(["-q", "90", "-o", icc.path, tagged.path])
        try Self.expectConverted(try Data(contentsOf: icc), profile: Self.adobeRGB, "HEIF ICC")
        // heif-enc 1.15 writes no nclx box for its --colour_primaries options; the corpus has an
        // iPhone-style Display P3 HEIC (10-bit, alpha).
        if Corpus.isAvailable {
            let data = try Corpus.data("other/kingfisher/gradient-10b-displayp3-alpha.heic")
            let profile = try #require(try HEIFCoder().decode(data, options: DecodeOptions(keepsColors: true)).iccProfile)
            try Self.expectConverted(data, profile: profile, "HEIF Display P3")
        }
    }

    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles),
          .enabled(if: CodecTool.cjxl.isAvailable, CodecTool.cjxl.absentReason))
    func jxlColorEncodingAndICC() throws {
        let directory = try TemporaryDirectory()
        let bitmap = try ColorConversionTests.gradient()
        let plain = try Self.writePNG(bitmap, in: directory), tagged = try Self.writePNG(bitmap, profile: Self.adobeRGB, in: directory)
        let p3 = directory.url.appendingPathComponent("p3.jxl"), icc = directory.url.appendingPathComponent("icc.jxl")
        try CodecTool.cjxl.run(["-d", "0", "-x", "color_space=RGB_D65_DCI_Rel_SRG", plain.path, p3.path])
        try CodecTool.cjxl.run(["-d", "0", tagged.path, icc.path])
        try Self.expectConverted(try Data(contentsOf: p3), profile: try #require(ColorProfileBuilder.nclxProfile(primaries: 12, transfer: 13)), "JXL P3")
        try Self.expectConverted(try Data(contentsOf: icc), profile: Self.adobeRGB, "JXL ICC")
    }

    /// PQ and HLG grey ramps (BT.2020, from avifenc) come out as sRGB greys that rise with the
    /// signal, black at 0, the reference white (203 cd/m²) at the tone curve's knee, highlights
    /// compressed below white rather than clipped early.
    @Test(.enabled(if: CodecTool.avifenc.isAvailable, CodecTool.avifenc.absentReason), arguments: [16, 18])
    func hdrTransfersAreToneMapped(_ transfer: Int) throws {
        let directory = try TemporaryDirectory()
        let ramp = try Bitmap(width: 256, height: 8) { buffer in
            for index in 0..<(256 * 8) { let v = UInt8(index % 256); buffer[index * 4] = v; buffer[index * 4 + 1] = v; buffer[index * 4 + 2] = v; buffer[index * 4 + 3] = 255 }
        }
        let png = try Self.writePNG(ramp, in: directory), avif = directory.url.appendingPathComponent("hdr.avif")
        try CodecTool.avifenc.run(["--cicp", "9/\(transfer)/9", "-y", "444", "--min", "0", "--max", "0", "--speed", "10", png.path, avif.path])
        let data = try Data(contentsOf: avif)
        let kept = try AVIFCoder().decode(data, options: DecodeOptions(keepsColors: true))
        let converted = try AVIFCoder().decode(data, options: DecodeOptions())
        let hdr = try #require(ColorProfileBuilder.Transfer(nclx: transfer))
        var previous = 0
        for x in 0..<256 {
            let signal = try #require(kept.bitmap.pixel(x: x, y: 4)), out = try #require(converted.bitmap.pixel(x: x, y: 4))
            let linear = hdr.linear(Double(signal.g) / 255)
            let encoded = linear <= 0.0031308 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
            #expect(abs(Int(out.g) - Int((encoded * 255).rounded())) <= 2, "signal \(signal.g)")
            #expect(Int(out.g) >= previous - 1)
            previous = Int(out.g)
        }
        #expect(converted.bitmap.pixel(x: 0, y: 0)?.g ?? 255 <= 1)
        #expect(ColorProfileBuilder.toneMapped(1) == 0.75 + 0.25 * (1 - exp(-1)))
    }

    // MARK: - Animations

    static func frames() throws -> [Bitmap] {
        try (0..<3).map { try PixelDifference.gradient(width: 40, height: 30, alpha: false, seed: $0) }
    }

    /// APNG (iCCP) and animated WebP (ICCP) written by Pillow with an Adobe RGB profile: every
    /// frame is converted.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles),
          arguments: ["PNG", "WEBP"])
    func animatedFramesAreConverted(_ format: String) throws {
        let directory = try TemporaryDirectory()
        var paths: [String] = []
        for (index, frame) in try Self.frames().enumerated() {
            let url = directory.url.appendingPathComponent("f\(index).png")
            try PNGCoder.encodeBitmap(frame, keepAlpha: false).write(to: url)
            paths.append(url.path)
        }
        let output = directory.url.appendingPathComponent("anim")
        let script = """
            import sys
            from PIL import Image
            frames = [Image.open(p).convert("RGB") for p in sys.argv[3:]]
            icc = open(sys.argv[2], "rb").read()
            extra = {"lossless": True} if "\(format)" == "WEBP" else {}
            frames[0].save(sys.argv[1], "\(format)", save_all=True, append_images=frames[1:], icc_profile=icc, duration=100, **extra)
            """
        try #require(try ChildProcess.runBlocking("/usr/bin/python3", ["-c", script, output.path, ColorConversionTests.adobeRGBPath] + paths).status == 0)
        let data = try Data(contentsOf: output)
        #expect(try ImageCodersManager.shared.decode(data, options: DecodeOptions()).frames.count == 3)
        try Self.expectConverted(data, profile: Self.adobeRGB, "animated \(format)")
        try Self.expectFramesOnDemandEqualTheWholeDecode(data, "animated \(format)")
    }

    /// Frames an ``AnimatedImage`` decodes on demand are converted like the whole decode's.
    static func expectFramesOnDemandEqualTheWholeDecode(_ data: Data, _ label: String) throws {
        let whole = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let animation = try #require(try ImageCodersManager.shared.decodeForDisplay(data, options: DecodeOptions()).animation, "\(label)")
        for (index, expected) in whole.frames.enumerated() {
            let difference = PixelDifference.maximum(try animation.frame(at: index).bitmap, expected.bitmap)
            #expect(difference == 0, "\(label) frame \(index) on demand: \(String(describing: difference)) levels from the whole decode")
        }
    }

    /// A GIF with an `ICCRGBG1` application extension (written here: Pillow 9.4 neither writes
    /// nor reads it) has every frame converted, like browsers that read it.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles))
    func gifICCExtensionAppliesToEveryFrame() throws {
        var frames: [ImageFrame] = []
        for frame in try Self.frames() { frames.append(ImageFrame(bitmap: frame, duration: 0.1)) }
        let gif = try Self.pillowGIF(frames.map(\.bitmap))
        #expect(GIFICCProfile.read(gif) == nil)
        // Right after the header, the logical screen and its global palette.
        let flags = gif[gif.startIndex + 10]
        let insertAt = 13 + (flags & 0x80 != 0 ? 3 << (Int(flags & 0x07) + 1) : 0)
        var block = Data([0x21, 0xFF, 11]) + Data("ICCRGBG1012".utf8)
        var rest = Self.adobeRGB[...]
        while !rest.isEmpty {
            let chunk = rest.prefix(255)
            block.append(UInt8(chunk.count)); block.append(contentsOf: chunk)
            rest = rest.dropFirst(chunk.count)
        }
        block.append(0)
        let tagged = gif.prefix(insertAt) + block + gif.dropFirst(insertAt)
        #expect(GIFICCProfile.read(Data(tagged)) == Self.adobeRGB)
        try Self.expectConverted(Data(tagged), profile: Self.adobeRGB, "GIF ICCRGBG1")
        try Self.expectFramesOnDemandEqualTheWholeDecode(Data(tagged), "GIF ICCRGBG1")
        // Cut inside the profile: no profile, and the file is read as before.
        #expect(GIFICCProfile.read(Data(tagged.prefix(insertAt + 100))) == nil)
    }

    static func pillowGIF(_ frames: [Bitmap]) throws -> Data {
        let directory = try TemporaryDirectory()
        var paths: [String] = []
        for (index, frame) in frames.enumerated() {
            let url = directory.url.appendingPathComponent("f\(index).png")
            try PNGCoder.encodeBitmap(frame, keepAlpha: false).write(to: url)
            paths.append(url.path)
        }
        let output = directory.url.appendingPathComponent("anim.gif")
        try #require(try ChildProcess.runBlocking("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image
            frames = [Image.open(p).convert("RGB").quantize(64) for p in sys.argv[2:]]
            frames[0].save(sys.argv[1], save_all=True, append_images=frames[1:], duration=100, loop=0)
            """, output.path] + paths).status == 0)
        return try Data(contentsOf: output)
    }

    // MARK: - Encoders, PNG chunks, CMYK, corpus

    /// AVIF and JPEG XL encoders embed a kept profile; decoding that file converts from it.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles),
          arguments: [ImageFormat.avif, .jxl])
    func encodersReEmbedKeptProfiles(_ format: ImageFormat) throws {
        guard format != .avif || AVIFCoder.encoderName != nil else { return }
        var image = DecodedImage(bitmap: try ColorConversionTests.gradient(), format: format, hasAlpha: false)
        image.iccProfile = Self.adobeRGB
        let data = try ImageCodersManager.shared.encode(image, format: format, options: EncodeOptions(quality: 0.95, lossless: true))
        try Self.expectConverted(data, profile: Self.adobeRGB, "\(format) encoder")
    }

    /// Browsers' order: an ICC profile wins over an `sRGB` chunk, which wins over `cHRM`/`gAMA`.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), .enabled(if: hasProfiles, ColorConversionTests.noProfiles))
    func pngChunkPrecedence() throws {
        let source = try ColorConversionTests.gradient()
        func chunk(_ type: String, _ body: [UInt8]) -> Data {
            let typed = Data(type.utf8) + body
            let crc = CRC32.checksum(typed)
            let length = UInt32(body.count)
            return Data([UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]) + typed
                + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        }
        func be(_ value: Double) -> [UInt8] { let v = UInt32((value * 100_000).rounded()); return [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let p3 = ColorProfileBuilder.Primaries.displayP3
        let chrm = chunk("cHRM", [p3.white.x, p3.white.y, p3.red.x, p3.red.y, p3.green.x, p3.green.y, p3.blue.x, p3.blue.y].flatMap(be))
        let gama = chunk("gAMA", be(1 / 2.2)), srgb = chunk("sRGB", [0])
        let tagged = try PNGCoder.encodeBitmap(source, keepAlpha: false, iccProfile: Self.adobeRGB)
        let plain = try PNGCoder.encodeBitmap(source, keepAlpha: false)
        func inserting(_ chunks: Data, into png: Data) -> Data { png.prefix(33) + chunks + png.dropFirst(33) }
        // iCCP + sRGB: the profile.
        try Self.expectConverted(inserting(srgb, into: tagged), profile: Self.adobeRGB, "iCCP over sRGB")
        // sRGB + cHRM + gAMA: nothing to do.
        let untouched = try PNGCoder().decode(inserting(srgb + chrm + gama, into: plain), options: DecodeOptions())
        #expect(untouched.bitmap.canonicalRGBA() == source.canonicalRGBA())
        // cHRM + gAMA: the colour space they describe (at the chunks' 1/100000 precision).
        func stored(_ c: ColorProfileBuilder.Chromaticity) -> ColorProfileBuilder.Chromaticity {
            .init(x: (c.x * 100_000).rounded() / 100_000, y: (c.y * 100_000).rounded() / 100_000)
        }
        let described = ColorProfileBuilder.Primaries(white: stored(p3.white), red: stored(p3.red), green: stored(p3.green), blue: stored(p3.blue))
        let gamma = ((1 / 2.2) * 100_000).rounded() / 100_000
        try Self.expectConverted(inserting(chrm + gama, into: plain),
                                 profile: try #require(ColorProfileBuilder.rgbProfile(primaries: described, transfer: .gamma(1 / gamma))), "cHRM + gAMA")
    }

    /// CMYK and YCCK JPEGs: with a CMYK profile through Little CMS (the corpus YCCK file in
    /// ColorConversionTests); without one there is no colour space to convert from, so they take
    /// the formula Pillow and browsers use, converted or kept alike.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func cmykWithoutAProfileMatchesPillow() throws {
        let script = """
            import io, sys
            from PIL import Image
            im = Image.new("CMYK", (48, 32))
            im.putdata([(x * 5, y * 8, (x + y) * 3, (x * y) % 200) for y in range(32) for x in range(48)])
            out = io.BytesIO(); im.save(out, "JPEG", quality=95)
            sys.stdout.buffer.write(out.getvalue())
            """
        let data = try ChildProcess.runBlocking("/usr/bin/python3", ["-c", script]).stdout
        let converted = try JPEGCoder().decode(data, options: DecodeOptions())
        let kept = try JPEGCoder().decode(data, options: DecodeOptions(keepsColors: true))
        let oracle = try #require(try PillowOracle.decode(data))
        #expect(ColorConversionTests.maxDifference(converted.bitmap, oracle) <= 1)
        #expect(converted.bitmap.canonicalRGBA() == kept.bitmap.canonicalRGBA())
    }

    /// Every shared-corpus AVIF decodes with colours converted (the default) too; files without
    /// a profile or with sRGB nclx values give exactly their kept pixels.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason),
          arguments: Corpus.names { _, entry in entry.format == "AVIF" && !entry.expectsError })
    func corpusAVIFFilesDecodeConverted(_ name: String) throws {
        let data = try Corpus.data(name)
        let converted = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let kept = try ImageCodersManager.shared.decode(data, options: DecodeOptions(keepsColors: true))
        #expect(converted.frames.count == kept.frames.count)
        if kept.iccProfile == nil {
            #expect(converted.bitmap.canonicalRGBA() == kept.bitmap.canonicalRGBA(), "\(name)")
        }
    }
}
