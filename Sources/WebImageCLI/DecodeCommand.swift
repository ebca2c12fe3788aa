import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `webimage decode FILE...`: decodes files and reports what they hold.
struct DecodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode image files and print their format, size, frames and pixel checksum.",
        discussion: "Exit status 0 when every file decoded, 1 when any failed."
    )

    @Argument(help: "Image files to decode.")
    var files: [String]

    @Flag(help: "Print one JSON object per file, one per line.")
    var json = false

    @Option(help: "Decode to a thumbnail whose longer side is at most N pixels.")
    var maxPixelSize: Int?

    @Option(help: "Write each first frame as canonical RGBA8 to DIR/<file name>.rgba.")
    var rgbaOut: String?

    @Flag(help: "With --rgba-out, also write every other frame N as DIR/<file name>.N.rgba.")
    var allFrames = false

    @Flag(help: "Keep the colours the file declares (no ICC profile or gAMA/cHRM conversion to sRGB).")
    var keepColors = false

    func run() async throws {
        let coders = ImageCodersManager.shared
        let options = DecodeOptions(maxPixelSize: maxPixelSize, keepsColors: keepColors)
        if let rgbaOut {
            try FileManager.default.createDirectory(atPath: rgbaOut, withIntermediateDirectories: true)
        }
        var failed = false
        for file in files {
            let report: DecodeReport
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                let start = ContinuousClock.now
                let image = try coders.decode(data, options: options)
                let elapsed = ContinuousClock.now - start
                let canonical = image.bitmap.canonicalRGBA()
                if let rgbaOut {
                    let name = URL(fileURLWithPath: file).lastPathComponent + ".rgba"
                    try Data(canonical).write(to: URL(fileURLWithPath: rgbaOut).appendingPathComponent(name))
                    if allFrames {
                        for (index, frame) in image.frames.enumerated().dropFirst() {
                            let frameName = URL(fileURLWithPath: file).lastPathComponent + ".\(index).rgba"
                            try Data(frame.bitmap.canonicalRGBA())
                                .write(to: URL(fileURLWithPath: rgbaOut).appendingPathComponent(frameName))
                        }
                    }
                }
                report = DecodeReport(file: file, image: image, sha256: SHA256.hex(of: canonical), elapsed: elapsed)
            } catch {
                failed = true
                report = DecodeReport(file: file, error: error)
            }
            print(json ? report.jsonLine() : report.humanLine())
        }
        if failed { throw ExitCode(1) }
    }
}

/// What `decode` says about one file.
struct DecodeReport: Encodable {
    struct Failure: Encodable {
        var code: String
        var message: String
    }

    var file: String
    var format: String?
    var width: Int?
    var height: Int?
    var frames: Int?
    var loopCount: Int?
    var durations: [Double]?
    var orientation: Int?
    var hasAlpha: Bool?
    var rgbaSHA256: String?
    var error: Failure?
    var milliseconds: Double?

    init(file: String, image: DecodedImage, sha256: String, elapsed: Duration) {
        self.file = file
        format = image.format.rawValue
        width = image.width
        height = image.height
        frames = image.frames.count
        loopCount = image.loopCount
        durations = image.durations
        orientation = image.orientation.exifValue
        hasAlpha = image.hasAlpha
        rgbaSHA256 = sha256
        milliseconds = elapsed.milliseconds
    }

    init(file: String, error: any Error) {
        self.file = file
        let typed = error as? WebImageError
        self.error = Failure(code: typed?.code ?? "fileSystem", message: typed.map(String.init(describing:)) ?? "\(error)")
    }

    enum CodingKeys: String, CodingKey {
        case file, format, width, height, frames, loopCount, durations, orientation, hasAlpha, rgbaSHA256, error
    }

    func jsonLine() -> String { JSONOutput.line(self) }

    func humanLine() -> String {
        if let error { return "\(file): error \(error.code): \(error.message)" }
        var line = "\(file): \(format ?? "?") \(width ?? 0)×\(height ?? 0)"
        if let frames, frames > 1 { line += ", \(frames) frames, loop \(loopCount ?? 0)" }
        if let orientation, orientation != 1 { line += ", orientation \(orientation)" }
        if hasAlpha == true { line += ", alpha" }
        if let milliseconds { line += ", \(milliseconds.fixed(1)) ms" }
        return line
    }
}
