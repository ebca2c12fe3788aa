import Foundation
import Testing

/// Debian's Pillow (`/usr/bin/python3`; the `python3` first on PATH may lack PIL) as a decoding
/// oracle: it decodes JPEGs with the same libjpeg-turbo this package links.
enum PillowOracle {
    static let python = "/usr/bin/python3"

    /// Whether `/usr/bin/python3` imports PIL; use as `.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason)`.
    static let isAvailable: Bool = (try? run(["-c", "import PIL"]).status) == 0
    static let absentReason: Comment = "Pillow is not installed for /usr/bin/python3 (apt install python3-pil)"

    /// What Pillow decoded: RGBA8 rows, tightly packed.
    struct Image: Equatable {
        var width: Int
        var height: Int
        var rgba: [UInt8]
    }

    /// Pillow's RGBA pixels of `data`, or `nil` when Pillow refuses it.
    /// - Parameters:
    ///   - scale: 1, 2, 4 or 8: libjpeg's DCT scaling through Pillow's `draft` (sides must divide).
    ///   - loadTruncated: `ImageFile.LOAD_TRUNCATED_IMAGES`, which decodes files that end early
    ///     the way libjpeg and browsers do (Pillow ends the data with an EOI marker).
    static func decode(_ data: Data, scale: Int = 1, loadTruncated: Bool = true) throws -> Image? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pillow-\(UUID().uuidString).jpg")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import sys
            from PIL import Image, ImageFile
            ImageFile.LOAD_TRUNCATED_IMAGES = sys.argv[3] == "1"
            try:
                im = Image.open(sys.argv[1])
                scale = int(sys.argv[2])
                if scale > 1:
                    im.draft(im.mode, (im.width // scale, im.height // scale))
                im = im.convert("RGBA")
            except Exception as error:
                sys.stdout.write("ERR " + repr(error))
                sys.exit(0)
            sys.stdout.buffer.write(b"OK %d %d\\n" % im.size + im.tobytes())
            """
        let result = try run(["-c", script, file.path, String(scale), loadTruncated ? "1" : "0"])
        guard result.status == 0 else { throw CocoaError(.fileReadUnknown) }
        guard result.output.starts(with: Array("OK ".utf8)), let newline = result.output.firstIndex(of: 0x0A) else { return nil }
        let fields = String(decoding: result.output[3..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        guard fields.count == 2 else { return nil }
        return Image(width: fields[0], height: fields[1], rgba: Array(result.output[(newline + 1)...]))
    }

    /// A CMYK JPEG of a colour gradient as Pillow writes it (inverted, with an Adobe marker, every
    /// component 1×1), for tests that need one; TurboJPEG here encodes RGB only.
    static func cmykJPEG(width: Int, height: Int) throws -> Data {
        let script = """
            import io, sys
            from PIL import Image
            w, h = int(sys.argv[1]), int(sys.argv[2])
            im = Image.new("CMYK", (w, h))
            im.putdata([(x * 255 // w, y * 255 // h, (x + y) % 256, (x * y) % 97) for y in range(h) for x in range(w)])
            out = io.BytesIO()
            im.save(out, "JPEG", quality=90)
            sys.stdout.buffer.write(out.getvalue())
            """
        let result = try run(["-c", script, String(width), String(height)])
        guard result.status == 0, !result.output.isEmpty else { throw CocoaError(.fileReadUnknown) }
        return Data(result.output)
    }

    /// Runs `script` with a temporary file holding `data` as `sys.argv[1]`; the script prints
    /// `OK width height\n` and RGBA bytes, or anything else for "refused".
    static func runScript(_ script: String, data: Data) throws -> Image? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pillow-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try run(["-c", script, file.path])
        guard result.status == 0 else { throw CocoaError(.fileReadUnknown) }
        guard result.output.starts(with: Array("OK ".utf8)), let newline = result.output.firstIndex(of: 0x0A) else { return nil }
        let fields = String(decoding: result.output[3..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        guard fields.count == 2 else { return nil }
        return Image(width: fields[0], height: fields[1], rgba: Array(result.output[(newline + 1)...]))
    }

    /// Runs the oracle's python with `arguments`: its exit status and standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: [UInt8]) {
        let result = try ChildProcess.runBlocking(python, arguments)
        return (result.status, Array(result.stdout))
    }
}
