import Foundation
import Testing
@testable import WebImage

@Suite struct FormatDetectionTests {
    @Test func recognizesSignatures() {
        #expect(ImageFormat.detect(Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10])) == .jpeg)
        #expect(ImageFormat.detect(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])) == .png)
        #expect(ImageFormat.detect(Data("GIF89a....".utf8)) == .gif)
        #expect(ImageFormat.detect(Data("GIF87a....".utf8)) == .gif)
        #expect(ImageFormat.detect(Data("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat.detect(Data("\0\0\0\u{18}ftypavif\0\0\0\0mif1".utf8)) == .avif)
        #expect(ImageFormat.detect(Data("\0\0\0\u{18}ftypheic\0\0\0\0mif1".utf8)) == .heic)
        #expect(ImageFormat.detect(Data("\0\0\0\u{14}ftypmif1\0\0\0\0".utf8)) == .heic)
        #expect(ImageFormat.detect(Data()) == .unknown)
        #expect(ImageFormat.detect(Data([0xFF, 0xD8])) == .unknown)
        #expect(ImageFormat.detect(Data("<svg></svg>".utf8)) == .unknown)
    }

    /// ISOBMFF brands (major or compatible) and the two JPEG XL signatures.
    @Test func avifHeifAndJPEGXL() {
        func ftyp(_ major: String, _ compatible: [String]) -> Data {
            var data = Data([0, 0, 0, UInt8(16 + 4 * compatible.count)]) + Data("ftyp\(major)\0\0\0\0".utf8)
            for brand in compatible { data += Data(brand.utf8) }
            return data
        }
        #expect(FormatDetection(ftyp("avis", ["msf1"])).format == .avif && FormatDetection(ftyp("avis", ["msf1"])).isAnimated)
        #expect(FormatDetection(ftyp("mif1", ["avif"])).format == .avif && !FormatDetection(ftyp("mif1", ["avif"])).isAnimated)
        for brand in ["heic", "heix", "mif1"] { #expect(FormatDetection(ftyp(brand, [])).format == .heic, "\(brand)") }
        #expect(FormatDetection(ftyp("msf1", ["hevc"])).format == .heic && FormatDetection(ftyp("msf1", ["hevc"])).isAnimated)
        #expect(FormatDetection(ftyp("isom", ["mp41"])).format == .unknown)
        #expect(ImageFormat.detect(Data([0xFF, 0x0A, 0xFA, 0x1F])) == .jxl)
        #expect(ImageFormat.detect(Data([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0, 0, 0x14])) == .jxl)
        #expect(ImageFormat.detect(Data([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87])) == .unknown)
        #expect(ImageFormat(mimeTypeOrExtension: "image/jxl") == .jxl && ImageFormat.jxl.fileExtension == "jxl")
    }

    @Test func webPVariants() {
        let lossy = FormatDetection(Data("RIFF\0\0\0\0WEBPVP8 \0\0\0\0".utf8))
        #expect(lossy.isLossless == false && !lossy.isAnimated)
        let lossless = FormatDetection(Data("RIFF\0\0\0\0WEBPVP8L\0\0\0\0".utf8))
        #expect(lossless.isLossless == true)
        var extended = Data("RIFF\0\0\0\0WEBPVP8X".utf8)
        extended += Data([10, 0, 0, 0, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(FormatDetection(extended).isAnimated)
    }

    @Test func apngNeedsAnimationControlBeforeImageData() {
        func chunk(_ type: String, _ length: Int = 0) -> Data {
            var data = Data([0, 0, 0, UInt8(length)])
            data += Data(type.utf8) + Data(repeating: 0, count: length) + Data([0, 0, 0, 0])
            return data
        }
        let signature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(FormatDetection(signature + chunk("IHDR", 13) + chunk("acTL", 8) + chunk("IDAT")).isAnimated)
        #expect(!FormatDetection(signature + chunk("IHDR", 13) + chunk("IDAT") + chunk("acTL", 8)).isAnimated)
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.absentReason))
    func corpusFormatsMatchPillow() throws {
        let expected: [String: ImageFormat] = ["JPEG": .jpeg, "MPO": .jpeg, "PNG": .png, "GIF": .gif,
                                               "WEBP": .webp, "AVIF": .avif]
        for name in Corpus.names(where: { $1.format != nil && expected[$1.format!] != nil }) {
            let format = expected[Corpus.entries[name]!.format!]!
            #expect(ImageFormat.detect(try Corpus.data(name)) == format, "\(name)")
        }
        for name in Corpus.names(where: { $1.oracle_unsupported == "HEIF/HEIC" }) {
            #expect(ImageFormat.detect(try Corpus.data(name)) == .heic, "\(name)")
        }
        for name in Corpus.names(where: { $1.oracle_unsupported == "JPEG XL" }) {
            #expect(ImageFormat.detect(try Corpus.data(name)) == .jxl, "\(name)")
        }
    }
}
