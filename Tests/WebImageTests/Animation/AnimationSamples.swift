import Foundation
import Testing
@testable import WebImage

/// Animations made for the animation tests: small GIF, APNG and WebP files written by Pillow with
/// every disposal and blend mode, and a large APNG built in-process from the project's PNG encoder.
enum AnimationSamples {
    static let python = "/usr/bin/python3"

    /// Pillow-written animations, by name: `gif-dispose` (disposal 0-3, a transparent index),
    /// `apng-dispose-blend` (APNG dispose none/background/previous × blend source/over, translucent
    /// frames), `webp-mixed` (lossless and lossy frames with alpha, key frames every 4 frames).
    static let pillowFiles: [String: Data] = {
        let script = #"""
            import io, sys, random
            from PIL import Image, ImageDraw
            random.seed(7)
            W, H, N = 48, 40, 14
            def frame(i, mode="RGBA"):
                im = Image.new(mode, (W, H), (0, 0, 0, 0))
                d = ImageDraw.Draw(im)
                for k in range(3):
                    x, y = (i * 5 + k * 13) % (W - 10), (i * 3 + k * 11) % (H - 10)
                    a = 255 if k == 0 else 90 + 50 * k
                    d.rectangle([x, y, x + 9 + k * 3, y + 8 + k * 2], fill=(40 * k + i * 9 % 255, 200 - 13 * i % 200, 30 + k * 70, a))
                return im
            frames = [frame(i) for i in range(N)]
            out = {}
            b = io.BytesIO()
            pal = [f.convert("RGB").convert("P", palette=Image.ADAPTIVE, colors=200) for f in frames]
            pal[0].save(b, "GIF", save_all=True, append_images=pal[1:], duration=[30 + 10 * i for i in range(N)], loop=3,
                        disposal=[i % 4 for i in range(N)], transparency=0, optimize=False)
            out["gif-dispose"] = b.getvalue()
            b = io.BytesIO()
            frames[0].save(b, "PNG", save_all=True, append_images=frames[1:], duration=[40] * N, loop=2,
                           disposal=[i % 3 for i in range(N)], blend=[(i // 3) % 2 for i in range(N)])
            out["apng-dispose-blend"] = b.getvalue()
            b = io.BytesIO()
            frames[0].save(b, "WEBP", save_all=True, append_images=frames[1:], duration=50, loop=0, lossless=False,
                           quality=80, allow_mixed=True, kmin=2, kmax=4, background=(0, 0, 0, 0))
            out["webp-mixed"] = b.getvalue()
            for name in sorted(out):
                sys.stdout.buffer.write(b"%s %d\n" % (name.encode(), len(out[name])))
                sys.stdout.buffer.write(out[name])
            """#
        guard let output = try? run(["-c", script]) else { return [:] }
        var files: [String: Data] = [:]
        var rest = output[...]
        while let newline = rest.firstIndex(of: 0x0A) {
            let header = String(decoding: rest[..<newline], as: UTF8.self).split(separator: " ")
            guard header.count == 2, let count = Int(header[1]) else { break }
            let start = newline + 1
            guard rest.endIndex - start >= count else { break }
            files[String(header[0])] = Data(rest[start..<(start + count)])
            rest = rest[(start + count)...]
        }
        return files
    }()

    static var pillowAvailable: Bool { pillowFiles.count == 3 }

    private static func run(_ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
        return [UInt8](data)
    }

    /// An APNG of `frames` frames on a `width` × `height` canvas: a full-size gradient default
    /// image, then a 64×64 square moving over it (blend source, dispose none), every frame
    /// `delay` seconds. Built from the project's PNG encoder, so it takes a fraction of a second.
    static func movingSquareAPNG(width: Int, height: Int, frames: Int, delay: Double = 1.0 / 30) throws -> Data {
        let background = try Bitmap(width: width, height: height) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let o = (y * width + x) * 4
                    buffer[o] = UInt8(x * 255 / max(1, width - 1)); buffer[o + 1] = UInt8(y * 255 / max(1, height - 1))
                    buffer[o + 2] = UInt8((x + y) & 0xFF); buffer[o + 3] = 255
                }
            }
        }
        func chunks(of png: Data) -> [(String, Data)] {
            var result: [(String, Data)] = []
            var offset = png.startIndex + 8
            while offset + 12 <= png.endIndex {
                let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
                let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
                result.append((type, Data(png[(offset + 8)..<(offset + 8 + length)])))
                offset += 12 + length
            }
            return result
        }
        var sequence: UInt32 = 0
        func control(_ width: Int, _ height: Int, _ x: Int, _ y: Int) -> Data {
            var body = Data()
            body.appendBigEndian(sequence); sequence += 1
            body.appendBigEndian(UInt32(width)); body.appendBigEndian(UInt32(height))
            body.appendBigEndian(UInt32(x)); body.appendBigEndian(UInt32(y))
            let milliseconds = UInt16((delay * 1000).rounded())
            body.append(contentsOf: [UInt8(milliseconds >> 8), UInt8(milliseconds & 0xFF), 0x03, 0xE8, 0, 0])
            return body
        }
        let backgroundChunks = chunks(of: try PNGCoder.encodeBitmap(background, keepAlpha: true))
        var apng = Data(PNGCoder.signature)
        apng.appendChunk("IHDR", backgroundChunks.first { $0.0 == "IHDR" }?.1 ?? Data())
        var animationControl = Data()
        animationControl.appendBigEndian(UInt32(frames))
        animationControl.appendBigEndian(0)
        apng.appendChunk("acTL", animationControl)
        apng.appendChunk("fcTL", control(width, height, 0, 0))
        for (type, body) in backgroundChunks where type == "IDAT" { apng.appendChunk("IDAT", body) }
        let side = min(64, width, height)
        for index in 1..<frames {
            let square = try Bitmap(width: side, height: side, filledWith: (UInt8(index * 7 & 0xFF), UInt8(255 - index & 0xFF), 90, 255))
            let x = (index * 13) % (width - side + 1), y = (index * 7) % (height - side + 1)
            apng.appendChunk("fcTL", control(side, side, x, y))
            for (type, body) in chunks(of: try PNGCoder.encodeBitmap(square, keepAlpha: true)) where type == "IDAT" {
                var frameData = Data()
                frameData.appendBigEndian(sequence); sequence += 1
                frameData.append(body)
                apng.appendChunk("fdAT", frameData)
            }
        }
        apng.appendChunk("IEND", Data())
        return apng
    }
}

/// A clock a test moves by hand.
final class ManualAnimationClock: AnimationClock {
    private let time = Locked(0.0)

    func now() -> Double { time.withLock { $0 } }
    func advance(by seconds: Double) { time.withLock { $0 += seconds } }
}
