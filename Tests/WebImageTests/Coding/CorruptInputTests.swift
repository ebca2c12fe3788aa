import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Hostile and broken input through every coder: always a typed error, never a crash, a hang
/// or an allocation the declared size asked for.
@Suite struct CorruptInputTests {
    let coders = ImageCodersManager.shared

    static let formats: [ImageFormat] = [.jpeg, .png, .webp]

    private func expectTypedErrorOrImage(_ data: Data, _ note: Comment) {
        do {
            let image = try coders.decode(data, options: DecodeOptions(pixelLimit: 4_000_000))
            #expect(image.width > 0 && image.height > 0, note)
        } catch {
            #expect(error is WebImageError, note)
        }
    }

    @Test(arguments: formats)
    func truncatedAtManyCutPoints(_ format: ImageFormat) throws {
        let data = try SampleImages.encoded(format, width: 120, height: 90)
        for cut in stride(from: 0, to: data.count, by: max(1, data.count / 48)) {
            let prefix = data.prefix(cut)
            do {
                _ = try coders.decode(Data(prefix), options: DecodeOptions())
                // Only a cut in trailing metadata may still decode; the image data must be whole. JPEG
                // excepted: libjpeg fills a scan cut short in grey, as browsers show it (JPEGFidelityTests).
                #expect(cut > data.count * 9 / 10 || format == .jpeg, "\(format) cut at \(cut) of \(data.count) decoded")
            } catch let error as WebImageError {
                switch error {
                case .truncatedData, .corruptData, .emptyData, .unsupportedFormat: break
                default: Issue.record("\(format) cut at \(cut): unexpected \(error)")
                }
            }
        }
    }

    @Test func zeroBytesAndSignaturesAlone() {
        #expect(throws: WebImageError.emptyData) { try coders.decode(Data(), options: DecodeOptions()) }
        let signatures: [[UInt8]] = [[0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
                                     Array("GIF89a".utf8), Array("RIFF\0\0\0\0WEBP".utf8)]
        for signature in signatures {
            #expect(throws: WebImageError.self) { try coders.decode(Data(signature), options: DecodeOptions()) }
        }
    }

    @Test func randomBytesBehindValidSignatures() {
        var random = SampleImages.SeededBytes(seed: 42)
        let signatures: [[UInt8]] = [[0xFF, 0xD8, 0xFF, 0xE0], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
                                     Array("GIF89a".utf8), Array("RIFF\u{40}\0\0\0WEBPVP8 ".utf8),
                                     Array("RIFF\u{40}\0\0\0WEBPVP8L".utf8), Array("RIFF\u{40}\0\0\0WEBPVP8X".utf8)]
        for signature in signatures {
            for length in [1, 7, 64, 513, 4096] {
                expectTypedErrorOrImage(Data(signature) + random.bytes(length), "\(signature.prefix(4)) + \(length) random bytes")
            }
        }
    }

    @Test func flippedBytesInValidFiles() throws {
        var random = SampleImages.SeededBytes(seed: 7)
        for format in Self.formats {
            let data = try SampleImages.encoded(format, width: 80, height: 60)
            for _ in 0..<40 {
                var damaged = data
                for _ in 0..<4 {
                    let index = Int.random(in: 0..<damaged.count, using: &random)
                    damaged[index] = UInt8.random(in: 0...255, using: &random)
                }
                expectTypedErrorOrImage(damaged, "damaged \(format)")
            }
        }
    }

    /// A GIF frame that lies wholly outside the logical screen and is disposed to the background
    /// (found by Fuzz/run.sh: the disposal's row range was inverted, which trapped).
    @Test func gifFrameOutsideTheScreenDisposedToBackground() throws {
        func frame(left: UInt8, top: UInt8) -> [UInt8] {
            // Graphic control: dispose to background; a 1×1 frame; LZW of one pixel of index 0.
            [0x21, 0xF9, 0x04, 0x08, 0, 0, 0, 0,
             0x2C, left, 0, top, 0, 1, 0, 1, 0, 0,
             0x02, 0x02, 0x44, 0x01, 0x00]
        }
        // A 4×4 screen with a two-colour global palette.
        let screen: [UInt8] = Array("GIF89a".utf8) + [4, 0, 4, 0, 0x80, 0, 0] + [255, 0, 0, 0, 0, 255]
        for (left, top) in [(0, 10), (10, 0), (10, 10), (0, 4), (4, 0)] as [(UInt8, UInt8)] {
            let gif = Data(screen + frame(left: 0, top: 0) + frame(left: left, top: top) + [0x3B])
            let image = try coders.decode(gif, options: DecodeOptions())
            #expect(image.frames.count == 2 && image.width == 4 && image.height == 4, "frame at \(left),\(top)")
        }
    }

    @Test func hugeDeclaredSizesAreRefusedBeforeAllocation() throws {
        // JPEG: rewrite the SOF0 size of a small JPEG to 60000×60000 (3.6 gigapixels).
        var jpeg = try SampleImages.encoded(.jpeg, width: 16, height: 16)
        let sof = try #require((2..<jpeg.count - 9).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0xEA, 0x60, 0xEA, 0x60])
        #expect(throws: WebImageError.self) { try coders.decode(jpeg, options: DecodeOptions()) }
        do {
            _ = try coders.decode(jpeg, options: DecodeOptions())
        } catch let error as WebImageError {
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
        // PNG: an IHDR declaring 100000×100000, with its CRC fixed so only the size is wrong.
        var png = Data(PNGCoder.signature)
        var header = Data()
        header.appendBigEndian(100_000)
        header.appendBigEndian(100_000)
        header.append(contentsOf: [8, 6, 0, 0, 0])
        png.appendChunk("IHDR", header)
        png.appendChunk("IDAT", Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]))
        png.appendChunk("IEND", Data())
        #expect(throws: WebImageError.tooLarge("100000×100000 is over the limit of 100000000 pixels")) {
            try coders.decode(png, options: DecodeOptions())
        }
        // GIF: a 65535×65535 logical screen.
        let gif = Data("GIF89a".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0x3B])
        #expect(throws: WebImageError.self) { try coders.decode(gif, options: DecodeOptions()) }
        // With scale-down allowed, an oversized JPEG decodes downsampled instead.
        var wide = try SampleImages.encoded(.jpeg, width: 400, height: 300)
        let small = try coders.decode(wide, options: DecodeOptions(pixelLimit: 30_000, scaleDownLargeImages: true))
        #expect(small.width * small.height <= 30_000 && small.width > small.height)
        wide.removeAll()
    }
}
