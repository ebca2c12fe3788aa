import WebImage

/// Picks the output format of `GET /image`.
///
/// `format=auto` picks from `Accept` and the service's `--auto-formats` (default `avif,webp`):
/// the first format of that list that `Accept` names and this build can encode; none, JPEG for
/// an opaque image and PNG for one with alpha. A type counts as accepted only when named
/// (`image/avif`, `image/webp`, `image/jxl`) with a non-zero quality: `*/*` and `image/*` are
/// what every client sends, including ones that cannot show AVIF. An animated source stays
/// animated: `auto` gives it WebP when listed and accepted, else GIF (which every client shows;
/// the AVIF and JPEG XL encoders here write stills). A fixed format that cannot animate gets the
/// first frame.
public enum FormatNegotiation {
    /// What `format=auto` can decide before the image is decoded: the output cache key's part.
    public struct Choice: Sendable, Hashable {
        /// The format of a still; `nil`: JPEG when opaque, PNG with alpha.
        public var still: ImageFormat?
        /// The format of an animation.
        public var animated: ImageFormat

        /// Creates a choice.
        public init(still: ImageFormat?, animated: ImageFormat) {
            self.still = still
            self.animated = animated
        }

        /// A fixed format was asked for.
        public static let jpeg = Choice(still: .jpeg, animated: .jpeg)
        /// A fixed format was asked for.
        public static let png = Choice(still: .png, animated: .png)
        /// A fixed format was asked for.
        public static let webp = Choice(still: .webp, animated: .webp)
        /// A fixed format was asked for.
        public static let avif = Choice(still: .avif, animated: .avif)
        /// A fixed format was asked for.
        public static let gif = Choice(still: .gif, animated: .gif)
        /// A fixed format was asked for.
        public static let jxl = Choice(still: .jxl, animated: .jxl)
        /// AVIF accepted, WebP too: AVIF for stills, WebP for animations.
        public static let avifOrWebP = Choice(still: .avif, animated: .webp)
        /// JPEG for an opaque image, PNG with alpha, GIF for an animation.
        public static let jpegOrPNG = Choice(still: nil, animated: .gif)
        /// AVIF accepted, WebP not: AVIF for stills, GIF for animations.
        public static let avifOnly = Choice(still: .avif, animated: .gif)

        /// A stable name for the output cache key (the names of the static choices above, as
        /// before `--auto-formats` existed, so existing keys stay).
        public var rawValue: String {
            let named: [(Choice, String)] = [(.jpeg, "jpeg"), (.png, "png"), (.webp, "webp"), (.avif, "avif"), (.gif, "gif"),
                                             (.jxl, "jxl"), (.avifOrWebP, "avifOrWebP"), (.jpegOrPNG, "jpegOrPNG"), (.avifOnly, "avifOnly")]
            if let name = named.first(where: { $0.0 == self })?.1 { return name }
            return "auto(\(still?.rawValue ?? "jpegOrPNG"),\(animated.rawValue))"
        }
    }

    /// The formats `--auto-formats` may list, and its default.
    public static let autoFormatCandidates: [ImageFormat] = [.avif, .webp, .jxl]
    /// `--auto-formats`' default order.
    public static let defaultAutoFormats: [ImageFormat] = [.avif, .webp]

    /// Narrows `requested` by `accept` before decoding, with the default `--auto-formats`.
    public static func choice(for requested: RequestedFormat, accept: String?, avifEncoderAvailable: Bool) -> Choice {
        choice(for: requested, accept: accept, autoFormats: defaultAutoFormats) { $0 != .avif || avifEncoderAvailable }
    }

    /// Narrows `requested` by `accept` before decoding: for `auto`, the first of `autoFormats`
    /// that `accept` names and `canEncode` allows.
    public static func choice(for requested: RequestedFormat, accept: String?, autoFormats: [ImageFormat],
                              canEncode: (ImageFormat) -> Bool) -> Choice {
        switch requested {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .avif: return .avif
        case .gif: return .gif
        case .jxl: return .jxl
        case .auto:
            let accepted = acceptedTypes(accept)
            let usable = autoFormats.filter { format in
                format.mimeType.map { accepted.contains($0) } == true && (format == .webp || canEncode(format))
            }
            return Choice(still: usable.first, animated: usable.contains(.webp) ? .webp : .gif)
        }
    }

    /// The format to encode to once the image is known.
    public static func format(for choice: Choice, isAnimated: Bool, hasAlpha: Bool) -> ImageFormat {
        if isAnimated { return choice.animated }
        return choice.still ?? (hasAlpha ? .png : .jpeg)
    }

    /// Whether an output in `format` keeps every frame of an animation.
    public static func canAnimate(_ format: ImageFormat) -> Bool {
        format == .webp || format == .gif
    }

    /// Whether an output in `format` keeps alpha (JPEG does not: transparency is flattened on `bg`).
    public static func keepsAlpha(_ format: ImageFormat) -> Bool {
        format != .jpeg
    }

    /// The media types `accept` names with a quality above zero, lowercased.
    static func acceptedTypes(_ accept: String?) -> Set<String> {
        guard let accept else { return [] }
        var types = Set<String>()
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingSpacesAndTabs.lowercased() }
            guard let type = parts.first, !type.isEmpty else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { types.insert(type) }
        }
        return types
    }
}
