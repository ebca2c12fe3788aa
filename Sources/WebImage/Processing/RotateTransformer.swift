#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ImageTransformers {
    /// Rotates every frame by an angle in degrees, clockwise as seen on screen.
    ///
    /// Multiples of 90° move pixels exactly (no resampling). Other angles sample bilinearly on
    /// premultiplied values onto a transparent canvas just large enough to hold the turned image,
    /// or, with ``fitsOriginalSize``, onto a canvas of the original size centred on the image (the
    /// corners of the turned image are cut off).
    public struct Rotate: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The angle in degrees; positive turns clockwise, negative counter-clockwise.
        public var degrees: Double
        /// Keep the original width and height instead of enlarging the canvas to fit.
        public var fitsOriginalSize: Bool

        /// Creates a rotation by `degrees` clockwise.
        public init(degrees: Double, fitsOriginalSize: Bool = false) {
            self.degrees = degrees
            self.fitsOriginalSize = fitsOriginalSize
        }

        /// `"rotate(D)"` with the angle normalized to [0, 360) (so -90 and 270 share a cache entry),
        /// plus `",fitsOriginalSize"` when set: `"rotate(45)"`, `"rotate(270,fitsOriginalSize)"`.
        public var identifier: String {
            "rotate(\(TransformSupport.format(normalizedDegrees))\(fitsOriginalSize ? ",fitsOriginalSize" : ""))"
        }

        /// The angle in [0, 360); not finite stays not finite.
        private var normalizedDegrees: Double {
            guard degrees.isFinite else { return degrees }
            let turned = degrees.truncatingRemainder(dividingBy: 360)
            let positive = turned < 0 ? turned + 360 : turned
            return positive == 360 || positive == 0 ? 0 : positive
        }

        /// Rotates every frame; durations are kept. A rotation that is not a multiple of 90° leaves
        /// transparent corners, so the result reports `hasAlpha`.
        /// - Throws: ``WebImageError/corruptData(_:)`` for an angle that is not finite,
        ///   ``WebImageError/tooLarge(_:)`` for a canvas over 100 megapixels.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let angle = normalizedDegrees
            guard angle.isFinite else { throw TransformSupport.invalid("rotate by \(degrees)°") }
            let quarter: ImageOrientation? = switch angle {
            case 0: .up
            case 90: .right
            case 180: .down
            case 270: .left
            default: nil
            }
            if let quarter, !(fitsOriginalSize && quarter.swapsDimensions && image.width != image.height) {
                return try image.mappingFrames { try $0.applying(quarter) }
            }
            let radians = angle * Double.pi / 180
            let (sine, cosine) = (sin(radians), cos(radians))
            let w = Double(image.width), h = Double(image.height)
            var (outWidth, outHeight) = (image.width, image.height)
            if !fitsOriginalSize {
                // The turned bounding box; the tolerance keeps 90.000000001° from adding a pixel.
                func side(_ value: Double) -> Int { max(1, Int((value - 1e-6).rounded(.up))) }
                let a = abs(cosine), b = abs(sine)
                guard (w * a + h * b) < 1e9, (w * b + h * a) < 1e9 else {
                    throw WebImageError.tooLarge("rotating \(image.width)×\(image.height)")
                }
                (outWidth, outHeight) = (side(w * a + h * b), side(w * b + h * a))
            }
            try TransformSupport.checkSize(width: outWidth, height: outHeight, identifier)
            var result = try image.mappingFrames {
                try Self.rotate($0, sine: sine, cosine: cosine, width: outWidth, height: outHeight)
            }
            result.hasAlpha = true
            return result
        }

        /// Samples `bitmap` turned by the angle whose sine and cosine are given onto a `width` ×
        /// `height` canvas with the same centre.
        private static func rotate(_ bitmap: Bitmap, sine: Double, cosine: Double,
                                   width: Int, height: Int) throws -> Bitmap {
            let sourceWidth = bitmap.width, sourceHeight = bitmap.height
            let sourceCenterX = Double(sourceWidth) / 2, sourceCenterY = Double(sourceHeight) / 2
            let centerX = Double(width) / 2, centerY = Double(height) / 2
            return try bitmap.withUnsafeBytes { sourceBytes in
                let source = sourceBytes.bindMemory(to: UInt8.self)
                // The premultiplied RGBA of a source pixel; outside the image, transparent.
                @inline(__always) func texel(_ x: Int, _ y: Int) -> SIMD4<Float> {
                    guard x >= 0, y >= 0, x < sourceWidth, y < sourceHeight else { return .zero }
                    let o = (y * sourceWidth + x) * 4
                    let alpha = Float(source[o + 3])
                    let scale = alpha / 255
                    return SIMD4(Float(source[o]) * scale, Float(source[o + 1]) * scale,
                                 Float(source[o + 2]) * scale, alpha)
                }
                return try Bitmap(width: width, height: height) { target in
                    let pixels = target.bindMemory(to: UInt8.self)
                    for y in 0..<height {
                        let dy = Double(y) + 0.5 - centerY
                        for x in 0..<width {
                            let dx = Double(x) + 0.5 - centerX
                            // Inverse of the clockwise turn (y points down), to pixel-centre coordinates.
                            let sx = dx * cosine + dy * sine + sourceCenterX - 0.5
                            let sy = -dx * sine + dy * cosine + sourceCenterY - 0.5
                            let o = (y * width + x) * 4
                            guard sx > -1, sy > -1, sx < Double(sourceWidth), sy < Double(sourceHeight) else {
                                pixels[o] = 0; pixels[o + 1] = 0; pixels[o + 2] = 0; pixels[o + 3] = 0
                                continue
                            }
                            let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                            let fx = Float(sx - Double(x0)), fy = Float(sy - Double(y0))
                            let top = texel(x0, y0) * (1 - fx) + texel(x0 + 1, y0) * fx
                            let bottom = texel(x0, y0 + 1) * (1 - fx) + texel(x0 + 1, y0 + 1) * fx
                            let value = top * (1 - fy) + bottom * fy
                            let alpha = min(max(value[3], 0), 255)
                            guard alpha >= 0.5 else {
                                pixels[o] = 0; pixels[o + 1] = 0; pixels[o + 2] = 0; pixels[o + 3] = 0
                                continue
                            }
                            let unpremultiply = 255 / alpha
                            pixels[o] = UInt8(min(max(value[0] * unpremultiply + 0.5, 0), 255))
                            pixels[o + 1] = UInt8(min(max(value[1] * unpremultiply + 0.5, 0), 255))
                            pixels[o + 2] = UInt8(min(max(value[2] * unpremultiply + 0.5, 0), 255))
                            pixels[o + 3] = UInt8(alpha + 0.5)
                        }
                    }
                }
            }
        }
    }
}
