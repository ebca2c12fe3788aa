import Foundation
import Testing
@testable import WebImage

/// A Debian command-line codec tool used as a test oracle (`avifdec`, `heif-convert`, `djxl`...).
/// Tests that need one are skipped, with the package named, when it is not installed.
struct CodecTool {
    let name: String
    let package: String

    static let avifenc = CodecTool(name: "avifenc", package: "libavif-bin")
    static let avifdec = CodecTool(name: "avifdec", package: "libavif-bin")
    static let heifEnc = CodecTool(name: "heif-enc", package: "libheif-examples")
    static let heifConvert = CodecTool(name: "heif-convert", package: "libheif-examples")
    static let cjxl = CodecTool(name: "cjxl", package: "libjxl-tools")
    static let djxl = CodecTool(name: "djxl", package: "libjxl-tools")

    var path: String? {
        ["/usr/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
    var isAvailable: Bool { path != nil }
    var absentReason: Comment { "\(name) is not installed (Debian package \(package))" }

    /// Runs the tool and throws when it fails.
    func run(_ arguments: [String]) throws {
        let status = try ChildProcess.runBlocking(try #require(path), arguments).status
        try #require(status == 0, "\(name) \(arguments.joined(separator: " ")) failed")
    }
}

/// Pixel comparisons with a stated tolerance.
enum PixelDifference {
    /// The largest difference of any channel of any pixel, or `nil` when the sizes differ.
    /// Where either pixel is fully transparent only alpha is compared: the colour under zero
    /// alpha is invisible (and the corpus rules store it as 0).
    static func maximum(_ a: Bitmap, _ b: Bitmap) -> Int? {
        differences(a, b).map { $0.max() ?? 0 }
    }

    /// The mean difference per channel, or `nil` when the sizes differ.
    static func mean(_ a: Bitmap, _ b: Bitmap) -> Double? {
        differences(a, b).map { Double($0.reduce(0, +)) / Double(max(1, $0.count)) }
    }

    private static func differences(_ a: Bitmap, _ b: Bitmap) -> [Int]? {
        guard a.width == b.width, a.height == b.height else { return nil }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                var result: [Int] = []
                result.reserveCapacity(x.count)
                var index = 0
                while index < x.count {
                    let channels = x[index + 3] == 0 || y[index + 3] == 0 ? 3..<4 : 0..<4
                    for channel in 0..<4 {
                        result.append(channels.contains(channel) ? abs(Int(x[index + channel]) - Int(y[index + channel])) : 0)
                    }
                    index += 4
                }
                return result
            }
        }
    }

    /// A test picture: a colour gradient with a soft alpha ramp (or opaque).
    static func gradient(width: Int, height: Int, alpha: Bool, seed: Int = 0) throws -> Bitmap {
        try Bitmap(width: width, height: height) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let offset = (y * width + x) * 4
                    buffer[offset] = UInt8((x * 255 / max(1, width - 1) + seed * 40) & 0xFF)
                    buffer[offset + 1] = UInt8(y * 255 / max(1, height - 1))
                    buffer[offset + 2] = UInt8(((x + y) * 2 + seed * 90) & 0xFF)
                    buffer[offset + 3] = alpha ? UInt8(min(255, 64 + x * 191 / max(1, width - 1))) : 255
                }
            }
        }
    }
}
