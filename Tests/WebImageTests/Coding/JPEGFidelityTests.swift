import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// JPEGs that libjpeg, Pillow and browsers decode must decode here with Pillow's pixels: libjpeg's
/// warnings (stray bytes, data that ends in the middle of the scan) are not errors, sampling
/// factors TurboJPEG cannot classify go through libjpeg's own API, and thumbnails follow the same
/// rules as full decodes. Every file is made here from a project-made JPEG.
@Suite struct JPEGFidelityTests {
    static func photo(width: Int = 96, height: Int = 64, sampling: JPEGCoder.ChromaSampling = .halfBoth,
                      progressive: Bool = false, seed: UInt64 = 21) throws -> Data {
        try JPEGCoder.encode(try JPEGEighthScaleTests.noisyPhoto(width: width, height: height, seed: seed),
                             quality: 85, sampling: sampling, progressive: progressive)
    }

    /// Offset of the first marker `marker` among the file's segments (before its first scan, or the SOS itself).
    static func segment(_ marker: UInt8, in data: Data) throws -> Int {
        var offset = 2
        while offset + 4 <= data.count, data[offset] == 0xFF {
            if data[offset + 1] == marker { return offset }
            offset += 2 + (Int(data[offset + 2]) << 8 | Int(data[offset + 3]))
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    static func pixels(_ image: DecodedImage) -> PillowOracle.Image {
        PillowOracle.Image(width: image.width, height: image.height, rgba: image.bitmap.withUnsafeBytes { Array($0) })
    }

    /// Decodes `data` in full and at 1/2, 1/4 and 1/8 scale (sides divisible by 8) and checks each
    /// against Pillow's decode at the same libjpeg scale.
    func expectPillowPixels(_ data: Data, _ note: Comment, loadTruncated: Bool = false) throws {
        let reference = try #require(try PillowOracle.decode(data, loadTruncated: loadTruncated), "Pillow refused: \(note)")
        for scale in [1, 2, 4, 8] {
            let expected = scale == 1 ? reference : try #require(try PillowOracle.decode(data, scale: scale, loadTruncated: loadTruncated))
            let options = DecodeOptions(maxPixelSize: scale == 1 ? nil : max(reference.width, reference.height) / scale)
            let image = try JPEGCoder().decode(data, options: options)
            #expect(Self.pixels(image) == expected, "\(note), scale 1/\(scale)")
        }
    }

    /// "Corrupt JPEG data: N extraneous bytes before marker" is a warning: libjpeg skips them.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func strayBytesBeforeMarkersDecodeLikePillow() throws {
        let data = try Self.photo()
        let dht = try Self.segment(0xC4, in: data)
        try expectPillowPixels(data[..<dht] + Data([0x00, 0x11, 0x22]) + data[dht...], "stray bytes in the header")
        try expectPillowPixels(data.dropLast(2) + Data([0x01, 0x02, 0x03]) + data.suffix(2), "stray bytes before EOI")
    }

    /// A file cut in the middle of its scan data decodes as libjpeg fills it (grey), as Pillow and
    /// browsers show it; sequential and progressive, at full size and as thumbnails.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason), arguments: [false, true])
    func cutInTheScanDecodesLikePillow(progressive: Bool) throws {
        let data = try Self.photo(width: 160, height: 120, progressive: progressive)
        let scan = try Self.segment(0xDA, in: data)
        for percent in [30, 60, 90] {
            let cut = data.prefix(scan + (data.count - scan) * percent / 100)
            try expectPillowPixels(cut, "\(progressive ? "progressive" : "sequential") cut at \(percent)% of the scan",
                                   loadTruncated: true)
        }
    }

    /// The shared corpus's truncated file: Pillow refuses it by default but decodes it when told
    /// to load truncated images, as browsers show it; so do we.
    @Test(.enabled(if: PillowOracle.isAvailable && Corpus.isAvailable, "needs Pillow and the shared corpus"))
    func corpusTruncatedFileDecodesLikePillow() throws {
        let data = try Corpus.data("jpeg/wuffs/peacock.default.truncated.jpeg")
        let reference = try #require(try PillowOracle.decode(data, loadTruncated: true))
        #expect(Self.pixels(try JPEGCoder().decode(data, options: DecodeOptions())) == reference)
    }

    /// A file cut before its scan begins has no image: a typed error, as a thumbnail too.
    @Test func cutInTheHeaderFails() throws {
        let data = try Self.photo()
        let scan = try Self.segment(0xDA, in: data)
        for cut in stride(from: 0, through: scan + 10, by: 5) {
            for options in [DecodeOptions(), DecodeOptions(maxPixelSize: 12), DecodeOptions(maxPixelSize: 48)] {
                #expect(throws: WebImageError.self, "cut at \(cut) of \(scan)") {
                    try ImageCodersManager.shared.decode(Data(data.prefix(cut)), options: options)
                }
            }
        }
    }

    /// Sampling factors outside TurboJPEG 2.1's list (it answers "Could not determine subsampling
    /// type") decode through libjpeg's API with libjpeg's pixels, at every DCT scale.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func unusualSamplingDecodesLikePillow() throws {
        func patched(_ data: Data, _ factors: [UInt8]) throws -> Data {
            var data = data
            let sof = try Self.segment(0xC0, in: data)
            for (index, factor) in factors.enumerated() { data[sof + 11 + 3 * index] = factor }
            return data
        }
        // 4:2:0 with its four luma blocks stacked 1×4 instead of 2×2 (4:1:0 turned on its side):
        // the same six blocks per MCU and, at 96×64, the same 24 MCUs, so the scan stays valid.
        try expectPillowPixels(try patched(try Self.photo(), [0x14]), "luma 1×4, chroma 1×1")
        // Grayscale declared 3×1: one component, so every block is its own MCU either way (TurboJPEG
        // takes this one itself; the others here it cannot classify, as tjDecompressHeader3 says).
        try expectPillowPixels(try patched(try Self.photo(sampling: .gray), [0x31]), "gray 3×1")
        // 4:4:4 relabelled luma 1×3: the scan no longer fits (libjpeg warns and fills in), which
        // libjpeg's API must survive like any other warning.
        try expectPillowPixels(try patched(try Self.photo(sampling: .full), [0x13]), "luma 1×3 over a 4:4:4 scan",
                               loadTruncated: true)
        // CMYK (Adobe, inverted) with its first component 1×2: libjpeg's CMYK output, converted as Pillow does.
        try expectPillowPixels(try patched(try PillowOracle.cmykJPEG(width: 96, height: 64), [0x12]), "CMYK, first component 1×2",
                               loadTruncated: true)
    }

    /// libjpeg's API path gives TurboJPEG's pixels on the files both take, at every DCT scale,
    /// whole or cut in the scan.
    @Test func libjpegAPIMatchesTurboJPEG() throws {
        var coder = JPEGCoder()
        coder.decodesEighthScaleFromDC = false
        for sampling: JPEGCoder.ChromaSampling in [.full, .halfBoth, .quarterAcross, .gray] {
            for progressive in [false, true] {
                let whole = try Self.photo(width: 120, height: 72, sampling: sampling, progressive: progressive)
                for data in [whole, whole.prefix(whole.count * 2 / 3)] {
                    for denominator in [1, 2, 4, 8] {
                        let size = ((120 + denominator - 1) / denominator, (72 + denominator - 1) / denominator)
                        let throughLibjpeg = try data.withUnsafeBytes { bytes in
                            try JPEGLibDecompressor(bytes).decode(denominator: denominator, size: size) { _ in }
                        }
                        let throughTurboJPEG = try coder.decode(data, options: DecodeOptions(maxPixelSize: size.0))
                        #expect(JPEGEighthScaleTests.samePixels(throughLibjpeg, throughTurboJPEG.bitmap),
                                "\(sampling), progressive \(progressive), \(data.count) bytes, 1/\(denominator)")
                    }
                }
            }
        }
    }

    /// A 10000×10000 JPEG whose whole scan fits in a few bytes: one-bit Huffman codes make each
    /// grey block two bits, so a complete file would need 390 KB; this one has 4 bytes and
    /// libjpeg would fill the other 99.99% in grey, writing a 400 MB bitmap. It is refused
    /// before any pixel memory is taken, as a thumbnail too.
    static func decompressionBomb(width: Int = 10000, height: Int = 10000) -> Data {
        var data: [UInt8] = [0xFF, 0xD8]
        data += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        data += [0xFF, 0xC0, 0x00, 0x0B, 0x08, UInt8(height >> 8), UInt8(height & 255), UInt8(width >> 8), UInt8(width & 255),
                 0x01, 0x01, 0x11, 0x00]
        // A DC and an AC table, each one 1-bit code: DC difference 0, end of block.
        for tableClass: UInt8 in [0x00, 0x10] {
            data += [0xFF, 0xC4, 0x00, 0x14, tableClass, 1] + [UInt8](repeating: 0, count: 15) + [0x00]
        }
        data += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
        data += [0x00, 0x00, 0x00, 0x00, 0xFF, 0xD9]
        return Data(data)
    }

    @Test func tinyFileDeclaringAHugeSizeIsRefused() throws {
        let bomb = Self.decompressionBomb()
        #expect(bomb.count < 200)
        for options in [DecodeOptions(), DecodeOptions(maxPixelSize: 256), DecodeOptions(maxPixelSize: 1250)] {
            let start = ContinuousClock.now
            #expect {
                try ImageCodersManager.shared.decode(bomb, options: options)
            } throws: { error in
                guard case .truncatedData = error as? WebImageError else { return false }
                return true
            }
            #expect(ContinuousClock.now - start < .milliseconds(500), "the refusal must come before decoding")
        }
        // The same header with the data a complete file of it needs is no bomb: it decodes.
        let small = Self.decompressionBomb(width: 800, height: 800)
        let blocks = 100 * 100
        let complete = small.dropLast(6) + Data(repeating: 0, count: blocks * 2 / 8) + Data([0xFF, 0xD9])
        let image = try JPEGCoder().decode(complete, options: DecodeOptions())
        #expect(image.width == 800 && image.bitmap.pixel(x: 400, y: 400)?.r == 128)
    }

    /// The bomb's cost measured from outside: the peak resident memory of a `webimage decode`
    /// process refusing it stays within a few MB of one decoding a small valid JPEG (without the
    /// check it decoded, 400 MB of bitmap and as much again for its checksum).
    @Test(.enabled(if: MeasuredRun.canMeasure, "needs the webimage binary (swift build --build-tests) and GNU time (/usr/bin/time)"))
    func decompressionBombCostsNoMemory() async throws {
        let directory = try TemporaryDirectory()
        let bomb = directory.url.appendingPathComponent("bomb.jpg")
        let small = directory.url.appendingPathComponent("small.jpg")
        try Self.decompressionBomb().write(to: bomb)
        try Self.photo().write(to: small)
        let baseline = try await runMeasured(["decode", "--json", small.path])
        #expect(baseline.status == 0)
        let refused = try await runMeasured(["decode", "--json", bomb.path])
        let code = try refused.errorCode()
        #expect(refused.status == 1 && code == "truncatedData", "\(refused.stdout)")
        #expect(refused.peakMemoryBytes < baseline.peakMemoryBytes + 16 << 20,
                "peak \(refused.peakMemoryBytes) bytes refusing the bomb vs \(baseline.peakMemoryBytes) for a small JPEG")
    }

    /// Whatever the damage, a file decodes in full exactly when it decodes as a thumbnail (by
    /// the DC decoder at 1/8 scale, or by libjpeg-turbo at 1/2).
    @Test func thumbnailsFailExactlyWhenFullDecodesFail() throws {
        let data = try Self.photo(width: 160, height: 120)
        var variants: [(String, Data)] = []
        for cut in stride(from: 0, to: data.count, by: 37) { variants.append(("cut at \(cut)", Data(data.prefix(cut)))) }
        // A bogus segment after the scan: libjpeg reads on to the end marker and fails there.
        variants.append(("bad segment after the scan", data.dropLast(2) + Data([0xFF, 0xC4, 0x00, 0x01, 0xFF, 0xD9])))
        variants.append(("comment after the scan", data.dropLast(2) + Data([0xFF, 0xFE, 0x00, 0x04, 0x41, 0x42, 0xFF, 0xD9])))
        var random = SampleImages.SeededBytes(seed: 5)
        for round in 0..<60 {
            var damaged = data
            for _ in 0..<(1 + round % 3) {
                damaged[Int.random(in: 2..<data.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            variants.append(("damaged \(round)", damaged))
        }
        for (note, variant) in variants {
            let full = (try? JPEGCoder().decode(variant, options: DecodeOptions())) != nil
            for size in [20, 80] {
                let thumbnail = (try? JPEGCoder().decode(variant, options: DecodeOptions(maxPixelSize: size))) != nil
                #expect(thumbnail == full, "\(note): full \(full), thumbnail of \(size) \(thumbnail)")
            }
        }
    }
}
