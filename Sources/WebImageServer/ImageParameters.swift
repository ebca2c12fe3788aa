#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// How `GET /image` fits the source into `w` × `h`.
public enum FitMode: String, Sendable, Hashable, CaseIterable {
    /// The whole image inside the box, aspect ratio kept (the default).
    case contain
    /// The box covered, aspect ratio kept, the middle cropped out.
    case cover
    /// Stretched to exactly the box.
    case fill
    /// As `contain`, then padded to exactly the box with `bg`, placed by `gravity`.
    case pad
}

/// The `format` parameter: a fixed output format, or `auto` (negotiated from `Accept`).
public enum RequestedFormat: String, Sendable, Hashable, CaseIterable {
    case auto, jpeg, png, webp, avif, gif, jxl
}

/// The parsed, validated query of `GET /image`: the source, the signature, and the
/// ``Options`` that shape the output, which read as its own properties (`parameters.width`).
@dynamicMemberLookup
public struct ImageParameters: Sendable, Hashable {
    /// The source image (http, https, `local:///PATH` under `--local-root`, or `s3://BUCKET/KEY`).
    public var url: URL
    /// The signature sent, if any (hex).
    public var signature: String?
    /// What the output is made of: size, fit, format, quality, geometry and effects.
    public var options: Options

    /// Each option, as a property of the parameters (`parameters.width` is `parameters.options.width`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<Options, Value>) -> Value {
        get { options[keyPath: keyPath] }
        set { options[keyPath: keyPath] = newValue }
    }

    /// How `wm`, `wm_gravity` and `wm_scale` place the service's watermark.
    public struct WatermarkOptions: Sendable, Hashable {
        /// `wm`: opacity, 0...1.
        public var opacity: Double
        /// `wm_gravity` (default `bottom-right`).
        public var gravity: ImageTransformers.Gravity
        /// `wm_scale`: its width as a fraction of the output's, 0.05...1 (default 0.25).
        public var scale: Double
    }

    /// A second image composited over the output (``Options/overlay``): thumbor's
    /// `watermark(url, x, y, alpha, w_ratio, h_ratio)`.
    public struct Overlay: Sendable, Hashable {
        /// Where the mark lies along one side.
        public enum Position: Sendable, Hashable {
            /// Pixels from the near edge, or (`fromFarEdge`, thumbor's `-N`) the mark's far
            /// edge that many pixels from the image's far edge.
            case pixels(Int, fromFarEdge: Bool)
            /// A percent of the image's side, rounded, then as ``pixels(_:fromFarEdge:)``.
            case percent(Int, fromFarEdge: Bool)
            /// Centred.
            case center
        }

        /// The mark's source, fetched under the same rules as the image's.
        public var url: URL
        /// Across.
        public var x: Position
        /// Down.
        public var y: Position
        /// How transparent the mark is made, 0...100: 255 × this / 100 off every pixel's alpha.
        public var transparency: Int
        /// The most of the image's width the mark may take, in percent (its aspect ratio kept).
        public var widthPercent: Int?
        /// The most of the image's height the mark may take, in percent.
        public var heightPercent: Int?

        /// An overlay of the mark at `url`.
        public init(url: URL, x: Position, y: Position, transparency: Int, widthPercent: Int? = nil, heightPercent: Int? = nil) {
            self.url = url
            self.x = x
            self.y = y
            self.transparency = transparency
            self.widthPercent = widthPercent
            self.heightPercent = heightPercent
        }

        /// The largest mark decoded, in pixels: a mark's decode is not in the render's estimate.
        public static let maxMarkPixels = 4096 * 4096

        var key: String {
            func text(_ position: Position) -> String {
                switch position {
                case let .pixels(value, far): "\(far ? "-" : "")\(value)"
                case let .percent(value, far): "\(far ? "-" : "")\(value)p"
                case .center: "center"
                }
            }
            return "\(url.absoluteString.count):\(url.absoluteString):\(text(x)):\(text(y)):\(transparency):\(widthPercent ?? 0):\(heightPercent ?? 0)"
        }
    }

    /// A rectangle of a size, placed by a gravity (``Options/sizedCrop``).
    public struct SizedCrop: Sendable, Hashable {
        /// Pixels from 1, a fraction of the image's side below 1, 0 for the whole side.
        public var width: Double
        /// As ``width``.
        public var height: Double
        /// Where the rectangle lies in the image.
        public var gravity: ImageTransformers.Gravity

        /// A crop of `width` × `height` placed by `gravity`.
        public init(width: Double, height: Double, gravity: ImageTransformers.Gravity) {
            self.width = width
            self.height = height
            self.gravity = gravity
        }

        /// The side cut out of an image side of `side` pixels, as imgproxy sizes it.
        func pixels(_ value: Double, of side: Int) -> Int {
            switch value {
            case 0: side
            case 1...: min(side, Int(min(value, Double(Int32.max))))
            default: min(side, max(1, Int((Double(side) * value).rounded())))
            }
        }
    }

    /// A point in an image's pixels (``Options/focalPoint``).
    public struct PixelPoint: Sendable, Hashable {
        public var x: Double
        public var y: Double
        /// The point `x`, `y`.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The largest `w` or `h` accepted: beyond it the output alone would be hundreds of megabytes.
    public static let maxSide = 8192
    /// The quality used when `q` is absent and the service's `--quality` names no other.
    public static let defaultQuality = 80
    /// The longest `url` accepted.
    public static let maxURLLength = 4096
    /// The parameter names `GET /image` knows.
    public static let names: Set<String> = optionNames.union(["url", "preset", "sig"])
    /// The names a preset may set: the options that shape the output.
    public static let optionNames: Set<String> = [
        "w", "h", "fit", "enlarge", "format", "q", "gravity", "focus", "dpr", "crop", "rotate", "flip", "blur", "sharpen",
        "bg", "progressive", "wm", "wm_gravity", "wm_scale",
    ]
    /// The names a request may carry under `--presets-only`.
    public static let presetsOnlyNames: Set<String> = ["url", "preset", "format", "sig"]

    /// A request value made by a URL dialect's parser (``DialectMount``): `url` is normalised as
    /// `/image`'s is, so both spellings of a source share one cache entry.
    public init(url: URL, options: Options = Options(), signature: String? = nil) {
        self.url = SourceURL.normalized(url)
        self.options = options
        self.signature = signature
    }

    /// Parses a raw (percent-encoded) query string: the presets named by `preset` apply left to
    /// right, then the request's own parameters override them.
    /// - Parameters:
    ///   - query: the query as sent, after the `?` and still percent-encoded (`+` is kept, not
    ///     read as a space).
    ///   - presets: the service's `--preset` definitions.
    ///   - presetsOnly: `--presets-only`: any parameter other than `url`, `preset`, `format` and `sig` is refused.
    /// - Throws: ``ServiceError`` 400 for an unknown, repeated, missing or malformed parameter, or
    ///   an unknown preset.
    public init(query: String, presets: ImagePresets = ImagePresets(), presetsOnly: Bool = false) throws {
        var own: [String: String] = [:]
        for (name, value) in Self.pairs(of: query) {
            guard Self.names.contains(name) else { throw ServiceError.badParameter("unknown parameter '\(name)'") }
            guard own[name] == nil else { throw ServiceError.badParameter("parameter '\(name)' given twice") }
            own[name] = value
        }
        if presetsOnly, let name = own.keys.sorted().first(where: { !Self.presetsOnlyNames.contains($0) }) {
            throw ServiceError.badParameter("parameter '\(name)' is not allowed: this service takes presets only (url, preset, format, sig)")
        }
        var values = try own["preset"].map(presets.options(named:)) ?? [:]
        values.merge(own) { _, request in request }
        guard let text = values["url"], !text.isEmpty else { throw ServiceError.badParameter("'url' is required") }
        guard text.utf8.count <= Self.maxURLLength else { throw ServiceError.badParameter("'url' is longer than \(Self.maxURLLength) bytes") }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw ServiceError.badParameter("'url' is not an absolute URL")
        }
        switch scheme {
        case "http", "https":
            guard url.host?.isEmpty == false else { throw ServiceError.badParameter("'url' has no host") }
        case "local":
            break  // The local root refuses what is not a path inside it (403), host and all.
        case "s3":
            guard url.host?.isEmpty == false else { throw ServiceError.badParameter("an s3 'url' names its bucket: s3://BUCKET/KEY") }
        default:
            throw ServiceError.sourceNotAllowed("only http, https, local and s3 sources are served, not \(scheme)")
        }
        // One spelling per source: one cache entry, one result-store object, one ETag.
        self.url = SourceURL.normalized(url)
        options = try Options(values)
        signature = values["sig"]
    }

    /// The options that shape the output: each one's query parameter, parsed, or its default.
    public struct Options: Sendable, Hashable {
        /// The target width in pixels, if any: `w` times `dpr`, rounded.
        public var width: Int?
        /// The target height in pixels, if any: `h` times `dpr`, rounded.
        public var height: Int?
        /// How the source fits the box.
        public var fit: FitMode = .contain
        /// Whether a source smaller than the box is enlarged.
        public var enlarge: Bool = false
        /// The output format asked for.
        public var format: RequestedFormat = .auto
        /// Quality for lossy outputs, 1...100; `nil`: the service's `--quality` for the output format.
        public var quality: Int?
        /// `gravity` (or `focus`, which overrides it): which part a `cover` crop keeps and where
        /// `pad` places the image.
        public var gravity: ImageTransformers.Gravity = .center
        /// `gravity=smart`: a `cover` crop keeps the most salient region (``/WebImage/ImageTransformers/SmartCrop``).
        public var smartGravity: Bool = false
        /// `dpr`, 1...5: the factor `w` and `h` were multiplied by.
        public var dpr: Double = 1.0
        /// `crop=X,Y,W,H`: the rectangle of the oriented source cut out before anything else.
        public var crop: ImageTransformers.Crop?
        /// `rotate`: 0, 90, 180 or 270 degrees clockwise, after `crop`.
        public var rotate: Int = 0
        /// `flip=h` (or `hv`): mirrored left to right, after `rotate`.
        public var flipHorizontal: Bool = false
        /// `flip=v` (or `hv`): mirrored top to bottom, after `rotate`.
        public var flipVertical: Bool = false
        /// `blur`: the Gaussian's sigma, after the resize.
        public var blur: Double?
        /// `sharpen`: the unsharp mask's sigma, after `blur`.
        public var sharpen: Double?
        /// `bg`: the colour of `pad` and of transparency flattened for an output without alpha.
        public var background: RGBAColor = .white
        /// `progressive=1`: a progressive JPEG (an interlaced PNG).
        public var progressive: Bool = false
        /// `wm`, `wm_gravity`, `wm_scale`: the service's `--watermark` composited over the output.
        public var watermark: WatermarkOptions?

        // Options `--dialect thumbor` needs that `/image` has no parameter for (#45). Each has
        // no effect at its default.
        /// With `fit=cover`: the whole image scaled to cover the box, nothing cropped (thumbor's
        /// `full-fit-in`): the output is the box on one side and larger on the other.
        public var coversWithoutCrop: Bool = false
        /// The box turned a quarter when the (cropped, rotated) image is portrait and the box
        /// landscape or the other way round (thumbor's `adaptive-`).
        public var adaptsOrientation: Bool = false
        /// The box shrunk to the oriented source's size, side by side, before the fit (thumbor's
        /// `no_upscale()`: a 300×200 cover of a 100×100 source is 100×100).
        public var boxWithinSource: Bool = false
        /// A point of the oriented source, in its pixels, a `cover` crop is centred on as far as
        /// the image allows (thumbor's `focal()`); ignored when `crop` leaves it out.
        public var focalPoint: PixelPoint?
        /// Grey, ITU-R BT.601 luma (thumbor's `grayscale()`, as PIL's `L` mode), after the resize.
        public var grayscale: Bool = false
        /// Transparency flattened on `background` whatever the output format (thumbor's
        /// `background_color()`), not only for outputs without alpha.
        public var flattensAlways: Bool = false
        /// Brightness, contrast, saturation and channel shifts after the resize, in order
        /// (thumbor's `brightness()`, `contrast()`, `saturation()`, `rgb()`, with its arithmetic).
        public var colorAdjustments: [ImageTransformers.ColorAdjust.Step] = []
        /// The output scaled by this factor (0 < f ≤ 1) after the resize, each side truncated
        /// (thumbor's `proportion()`); ignored when a side would fall under one pixel.
        public var proportion: Double?
        /// Corners rounded to this radius after the resize and painted with ``cornerColor``
        /// (thumbor's `round_corner(r, red, green, blue)`).
        public var cornerRadius: Int?
        /// The colour the rounded corners are painted with.
        public var cornerColor: RGBAColor = .white
        /// The most bytes a JPEG or WebP output should take: encoded again at three quarters of
        /// the quality until it fits; when the quality would fall under 10 the first encoding is
        /// answered (thumbor's `max_bytes()`).
        public var maxBytes: Int?

        // Options `--dialect imgproxy` needs (#45). Each has no effect at its default.
        /// With a box of two sides: `fit` decided on the (cropped, rotated) image, `cover` when
        /// it and the box are both landscape (or square) or both portrait, `contain` otherwise
        /// (imgproxy's `auto`).
        public var fitsByOrientation: Bool = false
        /// The box scaled down, its aspect ratio kept, until it fits in the (cropped, rotated)
        /// image, before the fit (imgproxy's `force` without `enlarge`: a 1000×300 stretch of a
        /// 640×480 image is 640×192).
        public var boxScaledWithinSource: Bool = false
        /// After the fit, the image placed by `gravity` on a canvas of the box's size where it is
        /// smaller (a side not given: the image's), transparent, or `background` with
        /// `flattensAlways` (imgproxy's `extend`).
        public var extendsToBox: Bool = false
        /// The formats `auto` tries, in order, instead of the service's `--auto-formats`
        /// (imgproxy negotiates none unless `IMGPROXY_ENFORCE_WEBP`/`AVIF`); `nil`: the service's.
        public var autoFormats: [ImageFormat]?
        /// For `auto` when `Accept` names none of the formats tried: this format instead of JPEG
        /// or PNG by alpha; `.auto` for the source's own (JPEG, PNG, WebP or GIF), as imgproxy
        /// keeps it. `nil`: JPEG or PNG.
        public var autoFallback: RequestedFormat?
        /// A rectangle of the rotated and flipped image cut out before the fit, its size in
        /// pixels (or a fraction of the image's below 1), placed by its gravity (imgproxy's `crop`).
        public var sizedCrop: SizedCrop?
        /// Pixels added on each side after every other step but the watermark, filled with
        /// `background` (with `flattensAlways`) or transparent: top, right, bottom, left
        /// (imgproxy's `padding`). `nil`: none.
        public var padding: [Int]?
        /// A second image composited over the output after every other step (thumbor's
        /// `watermark()`); `nil`: none.
        public var overlay: Overlay?
        /// A border of one colour cut away before every other step, `crop`'s rectangle and the
        /// focal point moved with the image and `crop` kept inside it (thumbor's `trim`,
        /// imgproxy's `trim`); `nil`: none.
        public var trim: ImageTransformers.Trim?
        /// `trim`'s reference corner and equal cuts are the source's as stored, before its EXIF
        /// orientation turns it (imgproxy's order).
        public var trimsAsStored: Bool = false
        /// `crop` is kept inside the image, and one wholly outside it is no crop rather than a 400
        /// (thumbor's `AxB:CxD`, which it clamps to the image and ignores when nothing is left).
        public var ignoresCropOutside: Bool = false
        /// Square blocks of this side after the sharpens (imgproxy's `pixelate`, libvips' means); `nil`: none.
        public var pixelate: Int?
        /// A wavelet sharpen after `sharpen` (thumbor's `sharpen(amount, radius, luminance_only)`); `nil`: none.
        public var waveletSharpen: ImageTransformers.WaveletSharpen?

        /// Every option at its default: the source as it is, in the negotiated format.
        public init() {}

        /// - Throws: ``ServiceError`` 400 naming the malformed option.
        init(_ values: [String: String]) throws {
            width = try ImageParameters.side(values["w"], name: "w")
            height = try ImageParameters.side(values["h"], name: "h")
            if let text = values["fit"] {
                guard let fit = FitMode(rawValue: text) else { throw ServiceError.badParameter("'fit' must be contain, cover, fill or pad") }
                self.fit = fit
            }
            try parseGeometry(values)
            try parseEffects(values)
            switch values["enlarge"] {
            case nil, "0", "false": enlarge = false
            case "1", "true": enlarge = true
            default: throw ServiceError.badParameter("'enlarge' must be 0 or 1")
            }
            if let text = values["format"] {
                guard let format = RequestedFormat(rawValue: text) else {
                    throw ServiceError.badParameter("'format' must be auto, jpeg, png, webp, avif, gif or jxl")
                }
                self.format = format
            }
            if let text = values["q"] {
                guard let quality = Int(text), (1...100).contains(quality) else { throw ServiceError.badParameter("'q' must be an integer in 1...100") }
                self.quality = quality
            }
        }
    }

    /// A decimal in `range`, or 400 naming the parameter.
    static func decimal(_ text: String, name: String, in range: ClosedRange<Double>) throws -> Double {
        guard let value = Double(text), value.isFinite, range.contains(value),
              text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else {
            throw ServiceError.badParameter("'\(name)' must be a number in \(shortest(range.lowerBound))...\(shortest(range.upperBound))")
        }
        return value
    }

    /// `value` without a fraction when it has none (`1`, `0.05`).
    static func shortest(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private static func side(_ text: String?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), (1...maxSide).contains(value) else {
            throw ServiceError.badParameter("'\(name)' must be an integer in 1...\(maxSide)")
        }
        return value
    }

    /// The `name=value` pairs of a raw query, percent-decoded, in order. `+` is kept as it is:
    /// source URLs may contain it, and clients encode spaces as `%20`.
    static func pairs(of query: String) -> [(String, String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Hex.percentDecodedString(parts[0]) ?? String(parts[0])
            let raw = parts.count > 1 ? parts[1] : ""
            return (name, Hex.percentDecodedString(raw) ?? String(raw))
        }
    }

}

extension ImageParameters.Options {
    /// The part of the options that changes the output (not the signature): the output cache key
    /// and the ETag are made from it.
    ///
    /// The options of the first release are always written; each later one only when it is not
    /// its default, so the keys of requests that do not use it stay as they were.
    var renderKey: String {
        var key = "w=\(width.map(String.init) ?? "-"),h=\(height.map(String.init) ?? "-"),fit=\(fit.rawValue),"
            + "enlarge=\(enlarge ? 1 : 0),q=\(quality.map(String.init) ?? "-")"
        if smartGravity { key += ",gravity=smart" } else if gravity != .center { key += ",gravity=\(gravity.name)" }
        if let crop { key += ",crop=\(crop.x):\(crop.y):\(crop.width):\(crop.height)" }
        if rotate != 0 { key += ",rotate=\(rotate)" }
        if flipHorizontal || flipVertical { key += ",flip=\(flipHorizontal ? "h" : "")\(flipVertical ? "v" : "")" }
        if let blur { key += ",blur=\(blur)" }
        if let sharpen { key += ",sharpen=\(sharpen)" }
        if background != .white { key += ",bg=\(background.hexString)" }
        if progressive { key += ",progressive=1" }
        if let watermark { key += ",wm=\(watermark.opacity):\(watermark.gravity.name):\(watermark.scale)" }
        // thumbor's (#45).
        if coversWithoutCrop { key += ",outside=1" }
        if adaptsOrientation { key += ",adaptive=1" }
        if boxWithinSource { key += ",within=1" }
        if let focalPoint { key += ",focal=\(focalPoint.x):\(focalPoint.y)" }
        if grayscale { key += ",grayscale=1" }
        if flattensAlways { key += ",flatten=1" }
        if !colorAdjustments.isEmpty { key += "," + ImageTransformers.ColorAdjust(colorAdjustments).identifier }
        if let proportion { key += ",proportion=\(proportion)" }
        if let cornerRadius { key += ",corners=\(cornerRadius):\(cornerColor.hexString)" }
        if let maxBytes { key += ",mb=\(maxBytes)" }
        // imgproxy's (#45).
        if fitsByOrientation { key += ",autofit=1" }
        if boxScaledWithinSource { key += ",scaledwithin=1" }
        if extendsToBox { key += ",extend=1" }
        if let autoFormats { key += ",autoformats=" + autoFormats.map(\.rawValue).joined(separator: ":") }
        if let autoFallback { key += ",fallback=\(autoFallback.rawValue)" }
        if let padding { key += ",padding=" + padding.map(String.init).joined(separator: ":") }
        if let overlay { key += ",overlay=" + overlay.key }
        if let sizedCrop { key += ",sizedcrop=\(sizedCrop.width):\(sizedCrop.height):\(sizedCrop.gravity.name)" }
        if let trim { key += "," + trim.identifier }
        if trimsAsStored { key += ",trimstored=1" }
        if ignoresCropOutside { key += ",cropclamped=1" }
        if let pixelate { key += ",pixelate=\(pixelate)" }
        if let waveletSharpen { key += "," + waveletSharpen.identifier }
        return key
    }
}

extension ImageParameters {
    /// The output cache key's and the ETag's part made of the options (``Options/renderKey``).
    var renderKey: String { options.renderKey }
}
