extension ImageTransformers {
    /// Places every frame on a canvas of exactly ``width`` × ``height`` filled with ``color``,
    /// where ``gravity`` says (a letterbox: a ``Resize`` in ``Resize/Mode/fit`` mode, then this,
    /// is `ImageOps.pad` or CSS's `object-fit: contain` with a background).
    ///
    /// The image's pixels replace the canvas's where they land (as Pillow's `paste` without a
    /// mask); flattening transparency onto a colour is ``Flatten``'s. A frame larger than the
    /// canvas along a side keeps the part the gravity names.
    public struct Pad: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// Canvas width in pixels.
        public var width: Int
        /// Canvas height in pixels.
        public var height: Int
        /// The canvas colour around the image.
        public var color: RGBAColor
        /// Where the image sits on the canvas.
        public var gravity: Gravity

        /// Creates a pad to `width` × `height` with `color` around the image placed by `gravity`.
        public init(width: Int, height: Int, color: RGBAColor = .white, gravity: Gravity = .center) {
            self.width = width
            self.height = height
            self.color = color
            self.gravity = gravity
        }

        /// `"pad(WxH,#RRGGBBAA,GRAVITY)"`, e.g. `"pad(300x200,#FFFFFFFF,center)"`.
        public var identifier: String { "pad(\(width)x\(height),\(color.hexString),\(gravity.name))" }

        /// Pads every frame; durations are kept. The result has alpha when the image or the
        /// colour has.
        /// - Throws: ``WebImageError/corruptData(_:)`` for a side that is not positive,
        ///   ``WebImageError/tooLarge(_:)`` for a canvas over the transformers' pixel limit
        ///   (checked before anything is allocated).
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            guard width > 0, height > 0 else { throw TransformSupport.invalid("pad to \(width)×\(height)") }
            try TransformSupport.checkSize(width: width, height: height, identifier)
            if image.width == width, image.height == height { return image }
            var result = try image.mappingFrames { try pad($0) }
            result.hasAlpha = image.hasAlpha || color.alpha < 255
            return result
        }

        private func pad(_ bitmap: Bitmap) throws -> Bitmap {
            let origin = gravity.origin(inner: (bitmap.width, bitmap.height), outer: (width, height))
            // The part of the frame on the canvas, in canvas pixels.
            let left = max(0, origin.x), top = max(0, origin.y)
            let right = min(width, origin.x + bitmap.width), bottom = min(height, origin.y + bitmap.height)
            let fill = UInt32(color.red) | UInt32(color.green) << 8 | UInt32(color.blue) << 16 | UInt32(color.alpha) << 24
            return try bitmap.withUnsafeBytes { source in
                try Bitmap(width: width, height: height) { target in
                    let canvas = target.bindMemory(to: UInt32.self)
                    // The fill is written as bytes in memory order: R, G, B, A on a little-endian machine.
                    canvas.initialize(repeating: fill.littleEndian)
                    guard right > left, bottom > top, let from = source.baseAddress, let to = target.baseAddress else { return }
                    let rowBytes = (right - left) * 4
                    for y in top..<bottom {
                        let sourceOffset = (y - origin.y) * bitmap.bytesPerRow + (left - origin.x) * 4
                        (to + (y * width + left) * 4).copyMemory(from: from + sourceOffset, byteCount: rowBytes)
                    }
                }
            }
        }
    }
}
