extension ImageTransformers {
    /// Composites every frame over a solid ``color`` (source-over), so transparency becomes that
    /// colour: what a format without alpha (JPEG) needs, with a colour of the caller's choosing
    /// instead of the encoder's white.
    ///
    /// With an opaque colour the result is opaque (``DecodedImage/hasAlpha`` is `false`); with a
    /// translucent one, the usual "over" operator gives the combined alpha.
    public struct Flatten: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The colour under the image.
        public var color: RGBAColor

        /// Creates a flatten onto `color`.
        public init(color: RGBAColor = .white) {
            self.color = color
        }

        /// `"flatten(#RRGGBBAA)"`, e.g. `"flatten(#FFFFFFFF)"`.
        public var identifier: String { "flatten(\(color.hexString))" }

        /// Flattens every frame; an image without alpha is returned as it is.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            guard image.hasAlpha else { return image }
            let background = color
            var result = try image.mappingFrames { bitmap in
                try bitmap.mappingPixels { from, to, offset in
                    let pixel = (from[offset], from[offset + 1], from[offset + 2], from[offset + 3])
                    let out = Compositing.over(pixel, onto: (background.red, background.green, background.blue, background.alpha), opacity: 255)
                    to[offset] = out.0; to[offset + 1] = out.1; to[offset + 2] = out.2; to[offset + 3] = out.3
                }
            }
            result.hasAlpha = color.alpha < 255
            return result
        }
    }
}

/// Straight-alpha "over" compositing, shared by ``ImageTransformers/Flatten`` and
/// ``ImageTransformers/Watermark``.
enum Compositing {
    /// `top` (its alpha scaled by `opacity`/255) over `bottom`, both straight alpha, rounded.
    @inline(__always)
    static func over(_ top: (UInt8, UInt8, UInt8, UInt8), onto bottom: (UInt8, UInt8, UInt8, UInt8),
                     opacity: UInt32) -> (UInt8, UInt8, UInt8, UInt8) {
        // Alphas in 0...255², so the integer sums keep full precision.
        let topAlpha = UInt32(top.3) * opacity
        if topAlpha == 0 { return bottom }
        let bottomAlpha = UInt32(bottom.3) * (65025 - topAlpha) / 255
        let outAlpha = topAlpha + bottomAlpha
        if outAlpha == 0 { return (0, 0, 0, 0) }
        @inline(__always) func channel(_ t: UInt8, _ b: UInt8) -> UInt8 {
            UInt8((UInt32(t) * topAlpha + UInt32(b) * bottomAlpha + outAlpha / 2) / outAlpha)
        }
        return (channel(top.0, bottom.0), channel(top.1, bottom.1), channel(top.2, bottom.2),
                UInt8((outAlpha + 127) / 255))
    }
}
