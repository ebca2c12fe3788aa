extension ImageTransformers {
    /// Rounds the corners of every frame, with anti-aliased edges, and optionally draws a border
    /// inside the rounded outline.
    ///
    /// Pixels outside the outline become transparent and edge pixels partly so, in straight alpha;
    /// the result always reports `hasAlpha`. With ``outsideColor`` they take that colour instead
    /// (thumbor's `round_corner(r, red, green, blue)`), and alpha is left as it was. The radius is clamped to half the shorter side, so a
    /// large radius on a square makes a circle.
    public struct RoundCorner: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// A set of corners.
        public struct Corners: OptionSet, Sendable, Hashable {
            /// The bits, one per corner.
            public let rawValue: UInt8
            /// Creates a set from its bits.
            public init(rawValue: UInt8) { self.rawValue = rawValue }

            /// The top-left corner.
            public static let topLeft = Corners(rawValue: 1)
            /// The top-right corner.
            public static let topRight = Corners(rawValue: 2)
            /// The bottom-left corner.
            public static let bottomLeft = Corners(rawValue: 4)
            /// The bottom-right corner.
            public static let bottomRight = Corners(rawValue: 8)
            /// All four corners.
            public static let all: Corners = [.topLeft, .topRight, .bottomLeft, .bottomRight]

            /// `"all"`, `"none"`, or the corners in a fixed order joined with `"+"`.
            var name: String {
                let set = intersection(.all)
                if set == .all { return "all" }
                let names = [(Corners.topLeft, "topLeft"), (.topRight, "topRight"),
                             (.bottomLeft, "bottomLeft"), (.bottomRight, "bottomRight")]
                let parts = names.filter { set.contains($0.0) }.map(\.1)
                return parts.isEmpty ? "none" : parts.joined(separator: "+")
            }
        }

        /// Corner radius in pixels.
        public var radius: Double
        /// Which corners are rounded; the others stay square.
        public var corners: Corners
        /// Width in pixels of the border drawn inside the outline; 0 for none.
        public var borderWidth: Double
        /// Colour of the border.
        public var borderColor: RGBAColor
        /// The colour the corners are painted with; `nil` makes them transparent.
        public var outsideColor: RGBAColor?

        /// Creates the transform. Negative or non-finite radius and border width count as 0.
        public init(radius: Double, corners: Corners = .all, borderWidth: Double = 0,
                    borderColor: RGBAColor = .black, outsideColor: RGBAColor? = nil) {
            self.radius = radius
            self.corners = corners
            self.borderWidth = borderWidth
            self.borderColor = borderColor
            self.outsideColor = outsideColor
        }

        /// `"roundCorners(R)"` for all corners and no border; otherwise the corners and the border are
        /// added: `"roundCorners(R,topLeft+bottomRight,border:2,#FF0000FF)"`.
        public var identifier: String {
            var parts = [TransformSupport.format(safeRadius)]
            let border = safeBorderWidth > 0
            if corners.intersection(.all) != .all || border { parts.append(corners.name) }
            if border { parts.append("border:" + TransformSupport.format(safeBorderWidth)); parts.append(borderColor.hexString) }
            if let outsideColor { parts.append("outside:" + outsideColor.hexString) }
            return "roundCorners(\(parts.joined(separator: ",")))"
        }

        private var safeRadius: Double { radius.isFinite && radius > 0 ? radius : 0 }
        private var safeBorderWidth: Double { borderWidth.isFinite && borderWidth > 0 ? borderWidth : 0 }

        /// Rounds every frame; durations are kept and `hasAlpha` becomes `true` (kept as it was
        /// with an ``outsideColor``).
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            var result = try image.mappingFrames(round)
            if outsideColor == nil { result.hasAlpha = true }
            return result
        }

        private func round(_ bitmap: Bitmap) throws -> Bitmap {
            let width = bitmap.width, height = bitmap.height
            let halfShort = Double(min(width, height)) / 2
            let outer = RoundedRect(left: 0, top: 0, right: Double(width), bottom: Double(height),
                                    radius: min(safeRadius, halfShort), corners: corners)
            let border = min(safeBorderWidth, halfShort)
            let inner = RoundedRect(left: border, top: border, right: Double(width) - border,
                                    bottom: Double(height) - border,
                                    radius: max(0, outer.radius - border), corners: corners)
            // Only a band this wide along the edges can differ from the source.
            let band = min(max(width, height), Int((max(outer.radius, border) + 1).rounded(.up)))
            let borderAlpha = Float(borderColor.alpha) / 255
            let borderRGB = (Float(borderColor.red), Float(borderColor.green), Float(borderColor.blue))
            return try bitmap.withUnsafeBytes { source in
                try Bitmap(width: width, height: height) { target in
                    target.copyMemory(from: source)
                    let pixels = target.bindMemory(to: UInt8.self)
                    func shade(_ x: Int, _ y: Int) {
                        let px = Double(x) + 0.5, py = Double(y) + 0.5
                        let outerCoverage = outer.coverage(px, py)
                        let innerCoverage = border > 0 ? inner.coverage(px, py) : outerCoverage
                        if innerCoverage >= 1 { return }
                        let o = (y * width + x) * 4
                        if let outside = outsideColor {
                            // Painted, not cut: the outline's coverage mixes the image (and the
                            // border) with the colour, and alpha stays the image's.
                            let ring = max(0, outerCoverage - innerCoverage), rest = 1 - outerCoverage
                            func paint(_ value: UInt8, _ border: Float, _ colour: UInt8) -> UInt8 {
                                let mixed = Float(value) * innerCoverage + border * ring + Float(colour) * rest
                                return UInt8(min(255, max(0, mixed + 0.5)))
                            }
                            pixels[o] = paint(pixels[o], borderRGB.0, outside.red)
                            pixels[o + 1] = paint(pixels[o + 1], borderRGB.1, outside.green)
                            pixels[o + 2] = paint(pixels[o + 2], borderRGB.2, outside.blue)
                            return
                        }
                        // Image inside the inner outline and border in the ring are disjoint, so
                        // their premultiplied values add up.
                        let imageAlpha = Float(pixels[o + 3]) / 255 * innerCoverage
                        let ringAlpha = borderAlpha * max(0, outerCoverage - innerCoverage)
                        let alpha = imageAlpha + ringAlpha
                        guard alpha * 255 >= 0.5 else {
                            pixels[o] = 0; pixels[o + 1] = 0; pixels[o + 2] = 0; pixels[o + 3] = 0
                            return
                        }
                        func channel(_ value: UInt8, _ ring: Float) -> UInt8 {
                            let mixed = (Float(value) * imageAlpha + ring * ringAlpha) / alpha
                            return UInt8(min(255, max(0, mixed + 0.5)))
                        }
                        pixels[o] = channel(pixels[o], borderRGB.0)
                        pixels[o + 1] = channel(pixels[o + 1], borderRGB.1)
                        pixels[o + 2] = channel(pixels[o + 2], borderRGB.2)
                        pixels[o + 3] = UInt8(min(255, alpha * 255 + 0.5))
                    }
                    let bandX = min(band, width)
                    for y in 0..<height {
                        if y < band || y >= height - band {
                            for x in 0..<width { shade(x, y) }
                        } else {
                            for x in 0..<bandX { shade(x, y) }
                            for x in max(bandX, width - bandX)..<width { shade(x, y) }
                        }
                    }
                }
            }
        }
    }
}

/// A rectangle with some corners rounded, measured in pixels with pixel centres at `.5`.
private struct RoundedRect {
    let left, top, right, bottom, radius: Double
    let corners: RoundCornerTransformer.Corners

    /// How much of the pixel centred at (`x`, `y`) the shape covers, 0...1, from the signed distance
    /// to the outline (a one-pixel ramp: the usual analytic anti-aliasing).
    func coverage(_ x: Double, _ y: Double) -> Float {
        guard right > left, bottom > top else { return 0 }
        let centerX = (left + right) / 2, centerY = (top + bottom) / 2
        let corner: RoundCornerTransformer.Corners = y < centerY
            ? (x < centerX ? .topLeft : .topRight)
            : (x < centerX ? .bottomLeft : .bottomRight)
        let r = corners.contains(corner) ? radius : 0
        let qx = abs(x - centerX) - (right - left) / 2 + r
        let qy = abs(y - centerY) - (bottom - top) / 2 + r
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        let distance = outside + min(max(qx, qy), 0) - r
        return Float(min(1, max(0, 0.5 - distance)))
    }
}
