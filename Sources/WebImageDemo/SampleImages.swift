#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Images drawn in code, for tests and the demo: no binary fixtures in the repository.
public enum SampleImages {
    /// A smooth photo-like picture: diagonal gradients with soft circles, opaque.
    public static func gradient(width: Int, height: Int, seed: Int = 0) throws -> Bitmap {
        try Bitmap(width: width, height: height) { buffer in
            let fx = 255.0 / Double(max(width - 1, 1)), fy = 255.0 / Double(max(height - 1, 1))
            for y in 0..<height {
                for x in 0..<width {
                    let offset = (y * width + x) * 4
                    let dx = Double(x - width / 2), dy = Double(y - height / 2)
                    let ring = (sin((dx * dx + dy * dy).squareRoot() / Double(8 + seed % 7)) + 1) * 40
                    buffer[offset] = UInt8(clamping: Int(Double(x) * fx * 0.7 + ring))
                    buffer[offset + 1] = UInt8(clamping: Int(Double(y) * fy * 0.7 + ring))
                    buffer[offset + 2] = UInt8(clamping: Int(Double((x + y + seed * 37) % 256) * 0.5 + ring))
                    buffer[offset + 3] = 255
                }
            }
        }
    }

    /// Four solid quadrants (red, green, blue, white) with a transparent centre square when
    /// `transparentCenter` is set: easy to check after crops, flips and resizes.
    public static func quadrants(width: Int, height: Int, transparentCenter: Bool = false) throws -> Bitmap {
        try Bitmap(width: width, height: height) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let offset = (y * width + x) * 4
                    let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 255]]
                    var color = colors[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
                    if transparentCenter, abs(x - width / 2) < width / 8, abs(y - height / 2) < height / 8 {
                        color = [0, 0, 0, 0]
                    }
                    for channel in 0..<4 { buffer[offset + channel] = color[channel] }
                }
            }
        }
    }

    /// An encoded sample in `format` (PNG keeps alpha; JPEG and WebP lossy at quality 0.9).
    public static func encoded(_ format: ImageFormat, width: Int = 64, height: Int = 48, seed: Int = 0,
                               coders: ImageCodersManager = .shared) throws -> Data {
        let bitmap = try gradient(width: width, height: height, seed: seed)
        let image = DecodedImage(bitmap: bitmap, format: format, hasAlpha: false)
        return try coders.encode(image, format: format, options: EncodeOptions(quality: 0.9))
    }

    /// A deterministic pseudo-random byte source (SplitMix64) for fuzz-like tests.
    public struct SeededBytes: RandomNumberGenerator, Sendable {
        private var state: UInt64
        /// Creates a generator; the same seed gives the same bytes.
        public init(seed: UInt64) { state = seed }
        /// The next 64 random bits.
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// `count` random bytes.
        public mutating func bytes(_ count: Int) -> Data {
            Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &self) })
        }
    }
}
