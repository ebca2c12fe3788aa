#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import WebImage
import WebImageDemo
import Testing

/// The sources the server tests serve from the loopback origin.
enum ServerTestImages {
    /// An opaque 640×480 JPEG.
    static let photo: Data = try! SampleImages.encoded(.jpeg, width: 640, height: 480)

    /// A 64×64 PNG with a transparent center.
    static let alpha: Data = try! ImageCodersManager.shared.encode(
        DecodedImage(bitmap: try SampleImages.quadrants(width: 64, height: 64, transparentCenter: true), hasAlpha: true),
        format: .png, options: EncodeOptions())

    /// A 400×300 PNG: a white frame around a 300×200 picture at (40, 60), for `trim`.
    static let framed: Data = try! {
        let picture = try SampleImages.gradient(width: 300, height: 200, seed: 3)
        let bitmap = try picture.withUnsafeBytes { inner in
            try Bitmap(width: 400, height: 300) { buffer in
                let bytes = buffer.bindMemory(to: UInt8.self)
                for index in 0..<bytes.count { bytes[index] = 255 }
                for y in 0..<200 {
                    for x in 0..<300 {
                        for channel in 0..<4 { bytes[((y + 60) * 400 + x + 40) * 4 + channel] = inner[(y * 300 + x) * 4 + channel] }
                    }
                }
            }
        }
        return try ImageCodersManager.shared.encode(DecodedImage(bitmap: bitmap, hasAlpha: false), format: .png, options: EncodeOptions())
    }()

    /// ``framed`` stored turned: a 300×400 PNG whose `eXIf` says "rotate 90° clockwise"
    /// (orientation 6), shown 400×300 with its picture at (40, 60) as ``framed``.
    static let framedStoredTurned: Data = try! {
        let shown = try ImageCodersManager.shared.decode(framed, options: DecodeOptions())
        // Stored = shown turned 90° counter-clockwise, so that turning it clockwise shows it.
        let stored = try ImageTransformers.Rotate(degrees: 270).transform(shown)
        let png = Array(try ImageCodersManager.shared.encode(stored, format: .png, options: EncodeOptions()))
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01,
                             0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        // An eXIf chunk right after IHDR (8 bytes of signature, 25 of IHDR).
        let type = Array("eXIf".utf8)
        let crc = CRC32.checksum(Data(type + tiff))
        let length = UInt32(tiff.count)
        let chunk = withUnsafeBytes(of: length.bigEndian, Array.init) + type + tiff + withUnsafeBytes(of: crc.bigEndian, Array.init)
        return Data(png[0..<33] + chunk + png[33...])
    }()

    /// A three-frame 40×20 animated WebP.
    static let animation: Data = try! {
        let frames = try (0..<3).map { index in
            ImageFrame(bitmap: try Bitmap(width: 40, height: 20, filledWith: (UInt8(index * 100), 50, 200, 255)), duration: 0.1)
        }
        return try ImageCodersManager.shared.encode(try DecodedImage(frames: frames, loopCount: 0, hasAlpha: false),
                                                    format: .webp, options: EncodeOptions(lossless: true))
    }()

    /// A 64×48 JPEG whose EXIF says "rotate 90° clockwise" (orientation 6): shown 48×64.
    static let rotated: Data = {
        let jpeg = Array(try! SampleImages.encoded(.jpeg, width: 64, height: 48))
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01,
                             0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        let body = Array("Exif\0\0".utf8) + tiff
        let app1 = [0xFF, 0xE1, 0x00, UInt8(body.count + 2)] + body
        return Data(jpeg[0..<2] + app1 + jpeg[2...])
    }()

    /// Decodes a response body (all frames).
    static func decode(_ data: Data) throws -> DecodedImage {
        try ImageCodersManager.shared.decode(data, options: DecodeOptions())
    }

    /// Expects `reply` to `url` to be a 200 `type` image of `width` × `height`, as the reference
    /// service (`reference`, for the message) answers it.
    static func expectImage(_ reply: HTTPReply, url: String, type: String, width: Int, height: Int, reference: String,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(reply.status == 200, "\(url): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
        guard reply.status == 200 else { return }
        #expect(reply.header("Content-Type") == type, "\(url)", sourceLocation: sourceLocation)
        let decoded = try decode(reply.body)
        #expect(decoded.width == width && decoded.height == height,
                "\(url): \(decoded.width)×\(decoded.height), \(reference) makes \(width)×\(height)", sourceLocation: sourceLocation)
    }
}
