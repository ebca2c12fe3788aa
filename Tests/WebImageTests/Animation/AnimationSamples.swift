import Foundation
import Testing
@testable import WebImage

/// Animations made for the animation tests: small GIF, APNG and WebP files written by Pillow with
/// every disposal and blend mode, and a large APNG built in-process from the project's PNG encoder.
enum AnimationSamples {
    static let python = PillowOracle.python

    /// Pillow-written animations, by name: `gif-dispose` (disposal 0-3, a transparent index),
    /// `apng-dispose-blend` (APNG dispose none/background/previous × blend source/over, translucent
    /// frames), `webp-mixed` (lossless and lossy frames with alpha, key frames every 4 frames),
    /// `webp-blend` (lossless translucent frames blended onto the canvas, few key frames).
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
            b = io.BytesIO()
            frames[0].save(b, "WEBP", save_all=True, append_images=frames[1:], duration=50, loop=0, lossless=True,
                           kmin=9, kmax=17, background=(0, 0, 0, 0))
            out["webp-blend"] = b.getvalue()
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

    static var pillowAvailable: Bool { pillowFiles.count == 4 }

    private static func run(_ arguments: [String]) throws -> [UInt8] {
        let result = try PillowOracle.run(arguments)
        guard result.status == 0 else { throw CocoaError(.fileReadUnknown) }
        return result.output
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

extension AnimationSamples {
    /// An animated WebP assembled chunk by chunk, so every frame's blend and dispose flags are
    /// the test's choice (libwebp's encoder picks its own): on a 40×30 canvas, translucent
    /// lossless rectangles (alpha 0, 90, 200 and 255 in bands) at even offsets, blending or not,
    /// disposing to the background or not, in every combination.
    static func flaggedWebP() throws -> Data {
        struct Frame { var x: Int, y: Int, width: Int, height: Int, blend: Bool, dispose: Bool, seed: Int }
        let frames = [
            Frame(x: 0, y: 0, width: 40, height: 30, blend: false, dispose: false, seed: 1),
            Frame(x: 4, y: 2, width: 20, height: 16, blend: true, dispose: false, seed: 2),
            Frame(x: 10, y: 8, width: 24, height: 18, blend: true, dispose: true, seed: 3),
            Frame(x: 2, y: 6, width: 22, height: 20, blend: true, dispose: false, seed: 4),
            Frame(x: 16, y: 4, width: 18, height: 22, blend: false, dispose: true, seed: 5),
            Frame(x: 6, y: 10, width: 30, height: 14, blend: true, dispose: false, seed: 6),
            Frame(x: 0, y: 0, width: 40, height: 30, blend: true, dispose: true, seed: 7),
            Frame(x: 8, y: 2, width: 16, height: 24, blend: true, dispose: false, seed: 8),
        ]
        func le(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            Array(type.utf8) + le(body.count, 4) + body + (body.count % 2 == 1 ? [0] : [])
        }
        var body: [UInt8] = Array("WEBP".utf8)
        body += chunk("VP8X", [0x12, 0, 0, 0] + le(39, 3) + le(29, 3))
        body += chunk("ANIM", [0, 0, 0, 0] + le(0, 2))
        for frame in frames {
            let bitmap = try Bitmap(width: frame.width, height: frame.height) { buffer in
                for y in 0..<frame.height {
                    for x in 0..<frame.width {
                        let o = (y * frame.width + x) * 4
                        buffer[o] = UInt8((x * 37 + frame.seed * 50) & 0xFF)
                        buffer[o + 1] = UInt8((y * 23 + frame.seed * 80) & 0xFF)
                        buffer[o + 2] = UInt8((x * y + frame.seed * 11) & 0xFF)
                        buffer[o + 3] = [0, 90, 200, 255][((x + y + frame.seed) / 3) % 4]
                    }
                }
            }
            let still = try WebPCoder().encode(DecodedImage(bitmap: bitmap, hasAlpha: true), format: .webp,
                                               options: EncodeOptions(lossless: true))
            // A lossless still is RIFF, size, WEBP, then its VP8L chunk.
            let payload = Array(still[still.startIndex + 12..<still.endIndex])
            let flags: UInt8 = (frame.blend ? 0 : 0x02) | (frame.dispose ? 0x01 : 0)
            body += chunk("ANMF", le(frame.x / 2, 3) + le(frame.y / 2, 3) + le(frame.width - 1, 3) + le(frame.height - 1, 3)
                              + le(70, 3) + [flags] + payload)
        }
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }
}

/// A clock a test moves by hand.
final class ManualAnimationClock: AnimationClock {
    private let time = Locked(0.0)

    func now() -> Double { time.withLock { $0 } }
    func advance(by seconds: Double) { time.withLock { $0 += seconds } }
}
