extension ImageTransformers {
    /// Where a smaller rectangle sits inside a larger one: which part a cropping resize keeps
    /// (``Resize/gravity``, ``Crop``), where ``Pad`` places the image on its canvas, where
    /// ``Watermark`` puts its mark.
    public enum Gravity: Sendable, Hashable {
        /// Centred both ways.
        case center
        /// Against the top edge, centred across.
        case top
        /// Against the bottom edge, centred across.
        case bottom
        /// Against the left edge, centred down.
        case left
        /// Against the right edge, centred down.
        case right
        /// In the top-left corner.
        case topLeft
        /// In the top-right corner.
        case topRight
        /// In the bottom-left corner.
        case bottomLeft
        /// In the bottom-right corner.
        case bottomRight
        /// Centred on a point given as fractions (0...1) of the outer rectangle's width and
        /// height, as far as the edges allow (values outside 0...1 act as the nearest edge).
        case focus(x: Double, y: Double)

        /// The edge names as written in identifiers and URLs: `center`, `top`, `top-left`, ...
        /// (`focus(X,Y)` for a focal point).
        public var name: String {
            switch self {
            case .center: "center"
            case .top: "top"
            case .bottom: "bottom"
            case .left: "left"
            case .right: "right"
            case .topLeft: "top-left"
            case .topRight: "top-right"
            case .bottomLeft: "bottom-left"
            case .bottomRight: "bottom-right"
            case .focus(let x, let y): "focus(\(TransformSupport.format(x)),\(TransformSupport.format(y)))"
            }
        }

        /// The gravity named `name` (`center`, `top`, ..., `bottom-right`), or `nil`.
        public init?(name: String) {
            guard let gravity = Self.named.first(where: { $0.name == name }) else { return nil }
            self = gravity
        }

        /// The nine placements that have a name.
        static let named: [Gravity] = [.center, .top, .bottom, .left, .right, .topLeft, .topRight, .bottomLeft, .bottomRight]

        /// The top-left corner of an `inner` rectangle placed in an `outer` one (in the outer one's
        /// pixels). Where the inner one is larger along a side, the offset is negative: the
        /// outer one is then the part of the inner one that this gravity keeps.
        public func origin(inner: (width: Int, height: Int), outer: (width: Int, height: Int)) -> (x: Int, y: Int) {
            (Self.offset(inner: inner.width, outer: outer.width, anchor: horizontal),
             Self.offset(inner: inner.height, outer: outer.height, anchor: vertical))
        }

        /// Across: 0 left, 0.5 centre, 1 right; for a focal point, its fraction, centred on.
        private var horizontal: Anchor {
            switch self {
            case .left, .topLeft, .bottomLeft: .fraction(0)
            case .right, .topRight, .bottomRight: .fraction(1)
            case .center, .top, .bottom: .fraction(0.5)
            case .focus(let x, _): .point(x)
            }
        }

        /// Down: 0 top, 0.5 centre, 1 bottom; for a focal point, its fraction, centred on.
        private var vertical: Anchor {
            switch self {
            case .top, .topLeft, .topRight: .fraction(0)
            case .bottom, .bottomLeft, .bottomRight: .fraction(1)
            case .center, .left, .right: .fraction(0.5)
            case .focus(_, let y): .point(y)
            }
        }

        private enum Anchor {
            /// The share of the free space left before the inner rectangle.
            case fraction(Double)
            /// The inner rectangle centred on this fraction of the outer one, kept inside it.
            case point(Double)
        }

        private static func offset(inner: Int, outer: Int, anchor: Anchor) -> Int {
            let free = outer - inner
            switch anchor {
            case .fraction(let share):
                // Floor, so the centre matches an integer halving (`free / 2`) either sign.
                return Int((Double(free) * share).rounded(.down))
            case .point(let point):
                let clamped = point.isFinite ? min(max(point, 0), 1) : 0.5
                let wanted = Int((clamped * Double(outer) - Double(inner) / 2).rounded())
                // Inside whichever rectangle is larger.
                return free >= 0 ? min(max(wanted, 0), free) : max(min(wanted, 0), free)
            }
        }
    }
}
