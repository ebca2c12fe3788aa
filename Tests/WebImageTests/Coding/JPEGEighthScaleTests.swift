import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// ``JPEGEighthScaleDecoder`` must give libjpeg-turbo's 1/8-scale pixels exactly, and hand every
/// file it cannot prove it decodes the same way back to libjpeg-turbo.
@Suite struct JPEGEighthScaleTests {
    /// A photo-like bitmap with noise, so the JPEG has long codes, big coefficients and runs.
    static func noisyPhoto(width: Int, height: Int, seed: UInt64) throws -> Bitmap {
        var random = SampleImages.SeededBytes(seed: seed)
        let base = try SampleImages.gradient(width: width, height: height, seed: Int(seed))
        return try base.withUnsafeBytes { source in
            try Bitmap(width: width, height: height) { target in
                for index in stride(from: 0, to: source.count, by: 4) {
                    for channel in 0..<3 {
                        let noise = Int(UInt8.random(in: 0...255, using: &random)) / 4 - 32
                        target[index + channel] = UInt8(clamping: Int(source[index + channel]) + noise)
                    }
                    target[index + 3] = 255
                }
            }
        }
    }

    /// The 1/8-scale decode through the public path, with or without the DC decoder.
    static func eighthScale(_ data: Data, width: Int, height: Int, fast: Bool) throws -> Bitmap {
        var coder = JPEGCoder()
        coder.decodesEighthScaleFromDC = fast
        let size = (max(width, height) + 7) / 8
        return try coder.decode(data, options: DecodeOptions(maxPixelSize: size)).bitmap
    }

    static func samePixels(_ a: Bitmap, _ b: Bitmap) -> Bool {
        a.width == b.width && a.height == b.height && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
    }

    static let samplings: [JPEGCoder.ChromaSampling] = [.full, .halfAcross, .halfBoth, .halfDown, .quarterAcross, .gray]

    @Test(arguments: samplings)
    func matchesLibjpegTurbo(_ sampling: JPEGCoder.ChromaSampling) throws {
        for (width, height) in [(640, 480), (203, 157), (17, 9), (8, 8), (1, 1)] {
            for quality: Int32 in [40, 90, 100] {
                let bitmap = try Self.noisyPhoto(width: width, height: height, seed: UInt64(width * 31 + Int(quality)))
                let data = try JPEGCoder.encode(bitmap, quality: quality, sampling: sampling)
                let direct = try data.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) }
                #expect(direct != nil, "the DC decoder refused \(sampling) \(width)×\(height) q\(quality)")
                let fast = try Self.eighthScale(data, width: width, height: height, fast: true)
                let reference = try Self.eighthScale(data, width: width, height: height, fast: false)
                #expect(Self.samePixels(fast, reference), "\(sampling) \(width)×\(height) q\(quality)")
                // Two threads, the second starting mid-scan, must agree too.
                let split = try #require(try data.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0, twoThreadsFrom: 0) })
                #expect(Self.samePixels(split, try #require(direct)), "two threads: \(sampling) \(width)×\(height) q\(quality)")
            }
        }
    }

    /// A thumbnail big enough for the second thread (scan and resize) gives the same pixels
    /// when ``DecodeOptions/parallelDecoding`` keeps it on one thread.
    @Test func serialThumbnailMatchesTheParallelOne() throws {
        let data = try JPEGCoder.encode(try Self.noisyPhoto(width: 2400, height: 1600, seed: 11), quality: 95, sampling: .halfBoth)
        #expect(data.count > JPEGEighthScaleDecoder.parallelThreshold, "too small to take the two-thread path")
        let parallel = try JPEGCoder().decode(data, options: DecodeOptions(maxPixelSize: 256))
        let serial = try JPEGCoder().decode(data, options: DecodeOptions(maxPixelSize: 256, parallelDecoding: false))
        #expect(parallel.width == 256)
        #expect(Self.samePixels(parallel.bitmap, serial.bitmap))
    }

    /// TurboJPEG decodes at the largest scale whose size fits the one asked for: a picture of at
    /// most 4 pixels a side has the same 1/8 and 1/4 sizes, and it decodes at 1/4 or 1/2, not from
    /// the DC coefficients. Found by JPEGEighthScaleFuzzer on the 2×2 corpus file: the DC decoder
    /// gave (54, 102, 40) where libjpeg-turbo gives (127, 127, 41), the DC of a block padded from
    /// two pixels being mostly its edge repeated. The coder leaves such pictures to TurboJPEG.
    @Test(arguments: [JPEGCoder.ChromaSampling.full, .halfBoth])
    func picturesTurboJPEGDecodesAtALargerScaleKeepItsPixels(_ sampling: JPEGCoder.ChromaSampling) throws {
        for (width, height) in [(2, 2), (3, 4), (4, 4), (2, 9), (9, 3), (4, 1), (5, 4), (4, 5)] {
            let data = try JPEGCoder.encode(try Self.noisyPhoto(width: width, height: height, seed: UInt64(width * 7 + height)),
                                            quality: 90, sampling: sampling)
            let fast = try Self.eighthScale(data, width: width, height: height, fast: true)
            let reference = try Self.eighthScale(data, width: width, height: height, fast: false)
            #expect(Self.samePixels(fast, reference), "\(sampling) \(width)×\(height)")
        }
    }

    /// Chroma coefficients that dequantize past 16 bits, as only a corrupt file has: libjpeg-turbo's
    /// SIMD 2×2 inverse DCT (which Debian's x86-64 build runs) multiplies in 16 bits and
    /// saturates, its C code wraps, so the DC decoder cannot match both and leaves the file to it.
    /// Found by JPEGEighthScaleFuzzer (a mutated corpus photo, 244 bytes of its 1/8 thumbnail off).
    /// Made here: a quality-100 4:2:0 photo (quantizers of 1) whose chroma DC quantizer is then
    /// set to 64, the entropy-coded data unchanged: chroma DCs of 8 × 64 × (mean − 128) put the
    /// 2×2 samples past 512 (libjpeg's C code wraps them to 0, its SIMD code saturates to 255)
    /// and, past a mean offset of 64, the dequantized DC past 16 bits.
    @Test func chromaDequantizedPastSixteenBitsKeepsLibjpegTurbosPixels() throws {
        var data = try JPEGCoder.encode(try Self.noisyPhoto(width: 96, height: 64, seed: 9), quality: 100, sampling: .halfBoth)
        // DQT segments: FF DB, length, then per table Pq/Tq and 64 values (8-bit tables here).
        var patched = false
        var at = 2
        while at + 4 <= data.count, data[at] == 0xFF, data[at + 1] != 0xDA {
            let length = Int(data[at + 2]) << 8 | Int(data[at + 3])
            if data[at + 1] == 0xDB {
                var table = at + 4
                while table + 65 <= at + 2 + length {
                    if data[table] == 0x01 {
                        data[table + 1] = 64
                        patched = true
                    }
                    table += 65
                }
            }
            at += 2 + length
        }
        #expect(patched, "no chroma quantization table found")
        let fast = try Self.eighthScale(data, width: 96, height: 64, fast: true)
        let reference = try Self.eighthScale(data, width: 96, height: 64, fast: false)
        #expect(Self.samePixels(fast, reference))
        #expect(try data.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil)
    }

    /// Fill bytes inside the scan (`FF FF 00` for a stuffed `FF 00`): libjpeg-turbo's fast Huffman
    /// path takes the second FF for a marker and decodes the MCU from zeros, then its slow path
    /// decodes it again, reading the run as one FF byte, into blocks that still hold the first
    /// attempt's coefficients. Found by JPEGEighthScaleFuzzer: 4 pixels in the two MCUs over two
    /// such runs differed by one step of Cr. The DC decoder leaves such scans to libjpeg-turbo.
    @Test func fillBytesInsideTheScanKeepLibjpegTurbosPixels() throws {
        let encoded = Array(try JPEGCoder.encode(try Self.noisyPhoto(width: 640, height: 480, seed: 4), quality: 90,
                                                 sampling: .halfBoth))
        let scan = try #require(encoded.indices.dropLast().first { encoded[$0] == 0xFF && encoded[$0 + 1] == 0xDA })
        // Stuffed bytes a third and two thirds of the way into the scan, each given three fill bytes.
        let stuffed = (scan..<(encoded.count - 1)).filter { encoded[$0] == 0xFF && encoded[$0 + 1] == 0x00 }
        #expect(stuffed.count > 10, "too few stuffed bytes in the scan")
        var data = encoded
        for position in [stuffed[2 * stuffed.count / 3], stuffed[stuffed.count / 3]] {
            data.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: position)
        }
        let file = Data(data)
        let fast = try Self.eighthScale(file, width: 640, height: 480, fast: true)
        let reference = try Self.eighthScale(file, width: 640, height: 480, fast: false)
        #expect(Self.samePixels(fast, reference))
        #expect(try file.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil)
    }

    /// A short AC code whose symbol asks for 11 magnitude bits (more than baseline allows) has no
    /// skip entry; the long-code search, which starts past the lookup table's 10 bits, read
    /// it as a code of 11 bits with another symbol and skipped on. Found by JPEGEighthScaleFuzzer:
    /// from such a block on, every DC was off by 17. Here: three 9-bit codes (EOB, 0x01, 0x0B)
    /// and one 11-bit code; the bits `000000010` (0x0B) then `01` read as the 11-bit prefix of EOB.
    @Test func aShortACCodeAskingForTooManyMagnitudeBitsEndsTheDecode() throws {
        let counts: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 0, 0]
        let table = try #require(JPEGHuffmanTable(counts: counts, symbols: [0x00, 0x01, 0x0B, 0x02], isDC: false))
        let bytes: [UInt8] = [0x01, 0x20] + [UInt8](repeating: 0, count: 32)
        let skipped = bytes.withUnsafeBufferPointer { data in
            table.withTables { tables in
                var reader = JPEGBitReader(data.baseAddress!, bit: 0)
                return reader.skipAC(tables)
            }
        }
        #expect(!skipped, "a code of 0x0B (11 magnitude bits) was skipped as another symbol")
    }

    /// A Huffman table with more codes of a length than that length holds is refused, not
    /// filled past the end of the lookup tables.
    @Test func refusesOverfullHuffmanTables() throws {
        let overfull: [UInt8] = [3] + [UInt8](repeating: 0, count: 15)
        #expect(JPEGHuffmanTable(counts: overfull, symbols: [0, 1, 2], isDC: true) == nil)
        // The same inside a file: three 1-bit codes in its first table, the symbol count unchanged.
        var data = try JPEGCoder.encode(try Self.noisyPhoto(width: 64, height: 48, seed: 5), quality: 85, sampling: .halfBoth)
        let dht = try #require(data.indices.dropLast().first { data[$0] == 0xFF && data[$0 + 1] == 0xC4 })
        let counts = (dht + 5)..<(dht + 21)
        let donor = try #require(counts.dropFirst().first { data[$0] >= 3 })
        data[donor] -= 3
        data[counts.lowerBound] += 3
        #expect(try data.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil)
        _ = try? JPEGCoder().decode(data, options: DecodeOptions(maxPixelSize: 8))
    }

    @Test func leavesTruncatedAndCorruptDataToLibjpegTurbo() throws {
        let data = try JPEGCoder.encode(try Self.noisyPhoto(width: 160, height: 120, seed: 7), quality: 85, sampling: .halfBoth)
        for cut in stride(from: 2, to: data.count - 1, by: max(1, data.count / 97)) {
            let truncated = data.prefix(cut)
            // Cut before the last block's bits, the DC decoder must not invent the missing blocks.
            #expect(try truncated.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil, "cut at \(cut)")
        }
        var random = SampleImages.SeededBytes(seed: 99)
        for round in 0..<200 {
            var corrupt = data
            for _ in 0..<(1 + round % 4) {
                let index = Int.random(in: 600..<corrupt.count - 2, using: &random)
                corrupt[index] = UInt8.random(in: 0...255, using: &random)
            }
            // Whatever the damage, the public decode gives what libjpeg-turbo gives (or both fail).
            let fast = Result { try Self.eighthScale(corrupt, width: 160, height: 120, fast: true) }
            let reference = Result { try Self.eighthScale(corrupt, width: 160, height: 120, fast: false) }
            switch (fast, reference) {
            case (.success(let a), .success(let b)): #expect(Self.samePixels(a, b), "round \(round)")
            case (.failure, .failure): break
            default: Issue.record("round \(round): \(fast) vs \(reference)")
            }
        }
    }

    @Test func refusesWhatItDoesNotDecode() throws {
        let bitmap = try Self.noisyPhoto(width: 64, height: 64, seed: 3)
        let progressive = try JPEGCoder.encode(bitmap, quality: 80, sampling: .halfBoth, progressive: true)
        #expect(try progressive.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil)
        #expect(Self.samePixels(try Self.eighthScale(progressive, width: 64, height: 64, fast: true),
                                try Self.eighthScale(progressive, width: 64, height: 64, fast: false)))
        let png = try ImageCodersManager.shared.encode(DecodedImage(bitmap: bitmap, format: .png, hasAlpha: false),
                                                       format: .png, options: EncodeOptions())
        #expect(try png.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil)
        #expect(try Data([0xFF, 0xD8, 0xFF, 0xD9]).withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } == nil)
    }

    /// Every JPEG of the corpus (baseline, restart intervals, odd samplings, grayscale, CMYK,
    /// progressive) decodes at 1/8 scale exactly as libjpeg-turbo alone decodes it.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func matchesLibjpegTurboOnTheCorpus() throws {
        var taken = 0, compared = 0
        for name in Corpus.names(where: { _, entry in entry.format == "JPEG" && !entry.expectsError }) {
            let data = try Corpus.data(name)
            guard let entry = Corpus.entries[name], let width = entry.width, let height = entry.height, max(width, height) >= 16
            else { continue }
            if let single = try data.withUnsafeBytes({ try JPEGEighthScaleDecoder.decode($0, twoThreadsFrom: .max) }) {
                taken += 1
                let split = try data.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0, twoThreadsFrom: 0) }
                #expect(split.map { Self.samePixels($0, single) } == true, "two threads: \(name)")
            }
            let fast = Result { try Self.eighthScale(data, width: width, height: height, fast: true) }
            let reference = Result { try Self.eighthScale(data, width: width, height: height, fast: false) }
            switch (fast, reference) {
            case (.success(let a), .success(let b)): #expect(Self.samePixels(a, b), "\(name)")
            case (.failure, .failure): break
            default: Issue.record("\(name): \(fast) vs \(reference)")
            }
            compared += 1
        }
        #expect(compared > 40)
        #expect(taken > 30, "the DC decoder took only \(taken) of \(compared) corpus JPEGs")
    }
}
