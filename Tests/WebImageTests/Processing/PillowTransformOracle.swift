import Foundation
import Testing
@testable import WebImage

/// Runs a Pillow script on bitmaps (written as lossless PNGs, `sys.argv[1...]`) and reads back
/// the RGBA image it prints (`OK W H\n` + bytes): the oracle of the transformer tests.
enum PillowTransformOracle {
    /// The prelude every script gets: `images`, the inputs as RGBA; `emit(im)` prints the result.
    private static let prelude = """
        import sys
        from PIL import Image, ImageOps, ImageFilter
        images = [Image.open(p).convert("RGBA") for p in sys.argv[1:]]
        def emit(im):
            im = im.convert("RGBA")
            sys.stdout.buffer.write(b"OK %d %d\\n" % im.size + im.tobytes())

        """

    /// Pillow's result of `script` on `inputs`, as a bitmap.
    static func run(_ script: String, _ inputs: [Bitmap]) throws -> Bitmap {
        let directory = FileManager.default.temporaryDirectory
        let files = try inputs.map { bitmap -> URL in
            let file = directory.appendingPathComponent("oracle-\(UUID().uuidString).png")
            try PNGCoder.encodeBitmap(bitmap, keepAlpha: true).write(to: file)
            return file
        }
        defer { for file in files { try? FileManager.default.removeItem(at: file) } }
        let result = try PillowOracle.run(["-c", prelude + script] + files.map(\.path))
        try #require(result.status == 0, "the Pillow script failed")
        let output = result.output
        let newline = try #require(output.firstIndex(of: 0x0A))
        try #require(output.starts(with: Array("OK ".utf8)))
        let fields = String(decoding: output[3..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        try #require(fields.count == 2)
        let bytes = Array(output[(newline + 1)...])
        return try Bitmap(width: fields[0], height: fields[1]) { buffer in
            guard bytes.count == buffer.count else { throw WebImageError.corruptData("Pillow returned \(bytes.count) bytes") }
            buffer.copyBytes(from: bytes)
        }
    }

    /// A textured, colourful test picture: a gradient with a checker pattern and some edges.
    static func texture(width: Int, height: Int, alpha: Bool = false) throws -> Bitmap {
        try TestImages.bitmap(width: width, height: height) { x, y in
            let checker = ((x / 6) + (y / 6)) % 2 == 0 ? 60 : 0
            return (UInt8((x * 255 / max(1, width - 1) + checker) % 256), UInt8(y * 255 / max(1, height - 1)),
                    UInt8(((x * y) / 7 + checker) % 256), alpha ? UInt8(80 + (x * 175) / max(1, width - 1)) : 255)
        }
    }
}
