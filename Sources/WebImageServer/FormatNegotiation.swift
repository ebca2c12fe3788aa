import WebImage

/// Picks the output format of `GET /image`.
///
/// `format=auto` picks from `Accept`: AVIF when accepted and the AVIF encoder exists, else WebP
/// when accepted, else JPEG for an opaque image and PNG for one with alpha. A type counts as
/// accepted only when named (`image/avif`, `image/webp`) with a non-zero quality: `*/*` and
/// `image/*` are what every client sends, including ones that cannot show AVIF. An animated source
/// stays animated: `auto` gives it WebP when accepted, else GIF (which every client shows; the
/// AVIF encoder writes stills). A fixed format that cannot animate gets the first frame.
public enum FormatNegotiation {
    /// What `format=auto` can decide before the image is decoded: the output cache key's part.
    public enum Choice: String, Sendable, Hashable {
        /// A fixed format was asked for.
        case jpeg, png, webp, avif, gif
        /// AVIF accepted, WebP too: AVIF for stills, WebP for animations.
        case avifOrWebP
        /// JPEG for an opaque image, PNG with alpha, GIF for an animation.
        case jpegOrPNG
        /// AVIF accepted, WebP not: AVIF for stills, GIF for animations.
        case avifOnly
    }

    /// Narrows `requested` by `accept` before decoding.
    public static func choice(for requested: RequestedFormat, accept: String?, avifEncoderAvailable: Bool) -> Choice {
        switch requested {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .avif: return .avif
        case .gif: return .gif
        case .auto:
            let accepted = acceptedTypes(accept)
            let avif = avifEncoderAvailable && accepted.contains("image/avif")
            let webp = accepted.contains("image/webp")
            switch (avif, webp) {
            case (true, true): return .avifOrWebP
            case (true, false): return .avifOnly
            case (false, true): return .webp
            case (false, false): return .jpegOrPNG
            }
        }
    }

    /// The format to encode to once the image is known.
    public static func format(for choice: Choice, isAnimated: Bool, hasAlpha: Bool) -> ImageFormat {
        switch choice {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .gif: .gif
        case .avifOnly: isAnimated ? .gif : .avif
        case .avifOrWebP: isAnimated ? .webp : .avif
        case .jpegOrPNG: isAnimated ? .gif : hasAlpha ? .png : .jpeg
        }
    }

    /// Whether an output in `format` keeps every frame of an animation.
    public static func canAnimate(_ format: ImageFormat) -> Bool {
        format == .webp || format == .gif
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
