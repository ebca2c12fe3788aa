extension ImageTransformers {
    /// Brightness, contrast, saturation and per-channel shifts, in the order given, on straight
    /// (not premultiplied) red, green and blue; alpha is kept.
    ///
    /// The arithmetic is thumbor's (its C filters `_brightness`, `_contrast`, `_saturation`,
    /// `_rgb`, integer division and truncation included), so a service speaking thumbor's URLs
    /// gives thumbor's pixels; every step is pointwise, so one pass over the pixels applies them all.
    public struct ColorAdjust: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// One adjustment.
        public enum Step: Sendable, Hashable {
            /// Adds `percent` of 255 to each channel (thumbor's `brightness(percent)`).
            case brightness(percent: Int)
            /// Scales each channel's distance from 128 by ((100 + `percent`)² / 100) / 100
            /// (thumbor's `contrast(percent)`).
            case contrast(percent: Int)
            /// Moves each channel from the pixel's perceived brightness by `factor` (1 keeps the
            /// picture, 0 is grey; thumbor's `saturation(factor)`).
            case saturation(factor: Float)
            /// Adds a percent of 255 to each channel in turn (thumbor's `rgb(red, green, blue)`).
            case channels(red: Int, green: Int, blue: Int)

            /// The step with its percents passed through `bound`.
            func bounded(_ bound: (Int) -> Int) -> Step {
                switch self {
                case .brightness(let percent): .brightness(percent: bound(percent))
                case .contrast(let percent): .contrast(percent: bound(percent))
                case .saturation: self
                case let .channels(red, green, blue): .channels(red: bound(red), green: bound(green), blue: bound(blue))
                }
            }

            var identifier: String {
                switch self {
                case .brightness(let percent): "b\(percent)"
                case .contrast(let percent): "c\(percent)"
                case .saturation(let factor): "s\(factor)"
                case let .channels(red, green, blue): "rgb\(red):\(green):\(blue)"
                }
            }
        }

        /// The adjustments, applied in this order.
        public var steps: [Step]

        /// An adjustment of `steps`, in order.
        public init(_ steps: [Step]) {
            self.steps = steps
        }

        /// `"color(b10,c-20)"`.
        public var identifier: String { "color(\(steps.map(\.identifier).joined(separator: ",")))" }

        /// Adjusts every frame; durations and alpha are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            guard !steps.isEmpty else { return image }
            let steps = self.steps
            return try image.mappingFrames { bitmap in
                try bitmap.mappingPixels { from, to, index in
                    var r = Int(from[index]), g = Int(from[index + 1]), b = Int(from[index + 2])
                    for step in steps { Self.apply(step, &r, &g, &b) }
                    to[index] = UInt8(r); to[index + 1] = UInt8(g); to[index + 2] = UInt8(b)
                    to[index + 3] = from[index + 3]
                }
            }
        }

        /// One step on one pixel, each channel clamped to 0...255 after it. Percents beyond
        /// ±10 000 act as ±10 000 (every channel is already at an end long before), so no product overflows.
        static func apply(_ step: Step, _ r: inout Int, _ g: inout Int, _ b: inout Int) {
            func clamp(_ value: Int) -> Int { min(255, max(0, value)) }
            func bounded(_ percent: Int) -> Int { min(10_000, max(-10_000, percent)) }
            switch step.bounded(bounded) {
            case .brightness(let percent):
                let delta = 255 * percent / 100
                (r, g, b) = (clamp(r + delta), clamp(g + delta), clamp(b + delta))
            case .contrast(let percent):
                let factor = (percent + 100) * (percent + 100) / 100
                func stretch(_ value: Int) -> Int { clamp(factor * (value - 128) / 100 + 128) }
                (r, g, b) = (stretch(r), stretch(g), stretch(b))
            case .saturation(let factor):
                // As thumbor's C: the brightness in double, kept as a float; each result truncated.
                let p = Float((Double(r * r) * 0.299 + Double(g * g) * 0.587 + Double(b * b) * 0.114).squareRoot())
                func move(_ value: Int) -> Int {
                    let moved = p + (Float(value) - p) * factor
                    guard moved.isFinite else { return moved > 0 ? 255 : 0 }
                    return clamp(Int(max(-1e6, min(1e6, moved))))
                }
                (r, g, b) = (move(r), move(g), move(b))
            case let .channels(red, green, blue):
                (r, g, b) = (clamp(r + 255 * red / 100), clamp(g + 255 * green / 100), clamp(b + 255 * blue / 100))
            }
        }
    }
}
