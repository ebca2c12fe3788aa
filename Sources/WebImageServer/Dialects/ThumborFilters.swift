#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import WebImage

/// thumbor's `filters:name(args):name(args)` as the settings they change, read as thumbor reads
/// them: split at `):`, a name thumbor does not know skipped, arguments thumbor's patterns refuse
/// make the filter skipped (thumbor answers those URLs without the filter, so do we). A filter
/// thumbor knows that this service cannot honour is a 400 naming it, never a different image.
struct ThumborFilters: Sendable, Hashable {
    var quality: Int?
    var format: RequestedFormat?
    /// The Gaussian's sigma that blurs as thumbor's kernel (``blurSigma(radius:sigma:)``).
    var blurSigma: Double?
    var fill: RGBAColor?
    var background: RGBAColor?
    var grayscale = false
    /// Counter-clockwise, as PIL turns: 0, 90, 180 or 270.
    var rotate = 0
    var noUpscale = false
    var upscale = false
    var stretch = false
    /// `focal(LxT:RxB)`: the centre of the rectangles, each weighted by its area, as thumbor's
    /// centre of mass rounds it (down).
    var focal: ImageParameters.PixelPoint?
    /// `brightness()`, `contrast()`, `saturation()`, `rgb()` in the order given.
    var colorAdjustments: [ImageTransformers.ColorAdjust.Step] = []
    /// `proportion(F)`, 0 < F ≤ 1 (thumbor does nothing for other values).
    var proportion: Double?
    /// `watermark(url, x, y, alpha[, w_ratio, h_ratio])`, the URL as written.
    var watermark: Watermark?

    /// One `watermark()`: its arguments as thumbor reads them.
    struct Watermark: Sendable, Hashable {
        var source: String
        var x: ImageParameters.Overlay.Position
        var y: ImageParameters.Overlay.Position
        var transparency: Int
        var widthPercent: Int?
        var heightPercent: Int?
    }
    /// `round_corner(r, red, green, blue)`: the radius and the corners' colour.
    var cornerRadius: Int?
    var cornerColor = RGBAColor.white
    /// `max_bytes(N)`.
    var maxBytes: Int?
    /// `sharpen(amount, radius, luminance_only)`.
    var sharpen: ImageTransformers.WaveletSharpen?
    /// The `focal` rectangles as given (in the oriented source's pixels), for `meta/`.
    var focalBoxes: [ThumborURL.Crop] = []

    /// The filters thumbor 7 ships (`thumbor.filters.BUILTIN_FILTERS`) that this service does
    /// not apply: asked for, they are a 400 naming them.
    static let unsupported: Set<String> = [
        "colorize", "noise", "equalize", "frame", "convolution", "extract_focal", "max_age", "curve",
        "autojpg", "redeye",
    ]
    /// The ones it does apply (`strip_exif` and `strip_icc` hold already: outputs carry neither).
    static let supported: Set<String> = [
        "quality", "format", "blur", "fill", "background_color", "grayscale", "rotate", "no_upscale", "upscale",
        "strip_exif", "strip_icc", "focal", "stretch", "brightness", "contrast", "saturation", "rgb",
        "proportion", "max_bytes", "round_corner", "watermark", "sharpen",
    ]
    /// The most filters one URL may name.
    static let maxCount = 64

    /// Reads `text` (what is between `filters:` and the final `)`, inclusive).
    /// - Throws: ``ServiceError`` 400 naming a filter this service cannot honour, or a colour it cannot read.
    init(parsing text: Substring) throws {
        guard !text.isEmpty else { return }
        var pieces = text.split(separator: "):", omittingEmptySubsequences: false).map { String($0) }
        guard pieces.count <= Self.maxCount else { throw ServiceError.badParameter("more than \(Self.maxCount) thumbor filters") }
        for index in pieces.indices.dropLast() { pieces[index] += ")" }
        var focalWeight = 0.0, focalX = 0.0, focalY = 0.0
        for piece in pieces {
            let name = String(piece.prefix { $0 != "(" })
            // Without its parentheses thumbor skips even a filter it knows.
            guard let arguments = Self.arguments(of: piece, name: name) else { continue }
            if Self.unsupported.contains(name) {
                throw ServiceError.badParameter("thumbor filter '\(name)' is not supported by this service")
            }
            guard Self.supported.contains(name) else { continue }
            switch (name, arguments.count) {
            case ("quality", 1):
                guard let value = Self.digits(arguments[0]) else { continue }
                quality = min(100, max(1, value))
            case ("format", 1):
                switch arguments[0].lowercased() {
                case "jpeg", "jpg": format = .jpeg
                case "png": format = .png
                case "gif": format = .gif
                case "webp": format = .webp
                case "avif": format = .avif
                case "heic", "heif": throw ServiceError.badParameter("thumbor filter 'format(\(arguments[0]))': HEIF output is not supported")
                // thumbor ignores a format it does not know, and so keeps the image's.
                default: format = nil
                }
            case ("blur", 1), ("blur", 2):
                guard let radius = Self.digits(arguments[0]), radius > 0 else { continue }
                var sigma = 0.0
                if arguments.count == 2 {
                    guard let value = Self.decimal(arguments[1]) else { continue }
                    sigma = value
                }
                blurSigma = Self.blurSigma(radius: radius, sigma: sigma)
            case ("fill", 1), ("fill", 2):
                guard arguments[0].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { continue }
                fill = try Self.color(arguments[0], filter: "fill")
            case ("background_color", 1):
                guard arguments[0].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { continue }
                background = try Self.color(arguments[0], filter: "background_color")
            case ("rotate", 1):
                let text = arguments[0]
                let negative = text.hasPrefix("-")
                guard let value = Self.digits(negative ? String(text.dropFirst()) : text), value % 90 == 0 else { continue }
                rotate = ((negative ? -value : value) % 360 + 360) % 360
            case ("focal", 1):
                guard let box = Self.rectangle(arguments[0]) else { continue }
                let width = Double(box.right - box.left), height = Double(box.bottom - box.top)
                guard width != 0, height != 0 else { continue }
                focalBoxes.append(ThumborURL.Crop(left: box.left, top: box.top, right: box.right, bottom: box.bottom))
                let weight = width * height
                focalWeight += weight
                focalX += (Double(box.left) + width / 2) * weight
                focalY += (Double(box.top) + height / 2) * weight
            case ("brightness", 1), ("contrast", 1):
                guard let percent = Self.integer(arguments[0]) else { continue }
                colorAdjustments.append(name == "brightness" ? .brightness(percent: percent) : .contrast(percent: percent))
            case ("saturation", 1):
                guard let factor = Self.decimal(arguments[0]) else { continue }
                colorAdjustments.append(.saturation(factor: Float(factor)))
            case ("rgb", 3):
                let shifts = arguments.compactMap(Self.integer)
                guard shifts.count == 3 else { continue }
                colorAdjustments.append(.channels(red: shifts[0], green: shifts[1], blue: shifts[2]))
            case ("proportion", 1):
                guard let value = Self.decimal(arguments[0]), value > 0, value <= 1 else { continue }
                proportion = value
            case ("watermark", 4), ("watermark", 5), ("watermark", 6):
                guard !arguments[0].isEmpty, let x = try Self.position(arguments[1]), let y = try Self.position(arguments[2]),
                      let transparency = Self.digits(arguments[3]) else { continue }
                // thumbor's ratios: digits (a minus too) or `none`; 0 and none leave the mark's size.
                let ratios = arguments.dropFirst(4).map { $0 == "none" ? 0 : Self.integer($0) }
                guard ratios.allSatisfy({ $0 != nil }) else { continue }
                if ratios.contains(where: { $0! < 0 }) {
                    throw ServiceError.badParameter("thumbor filter 'watermark' with a negative ratio is not supported by this service")
                }
                let percents = ratios.map { $0! == 0 ? nil : $0 }
                watermark = Watermark(source: arguments[0], x: x, y: y, transparency: min(100, transparency),
                                      widthPercent: percents.first ?? nil, heightPercent: percents.count > 1 ? percents[1] : nil)
            case ("round_corner", 4), ("round_corner", 5):
                let radii = arguments[0].split(separator: "|", omittingEmptySubsequences: false).map { Self.digits(String($0)) }
                let channels = arguments[1...3].map { Self.digits($0) }
                guard radii.count <= 2, let radius = radii[0], radii.allSatisfy({ $0 != nil }),
                      channels.allSatisfy({ $0 != nil }) else { continue }
                if radii.count == 2, radii[1] != radius {
                    throw ServiceError.badParameter("thumbor filter 'round_corner' with two radii (elliptical corners) is not supported by this service")
                }
                if arguments.count == 5, ["true", "1"].contains(arguments[4].lowercased()) {
                    throw ServiceError.badParameter("thumbor filter 'round_corner' with transparent corners is not supported by this service")
                }
                cornerRadius = radius
                cornerColor = RGBAColor(red: UInt8(min(255, channels[0]!)), green: UInt8(min(255, channels[1]!)),
                                        blue: UInt8(min(255, channels[2]!)))
            case ("sharpen", 3):
                guard let amount = Self.decimal(arguments[0]), let radius = Self.decimal(arguments[1]),
                      ["true", "True", "false", "False", "1", "0"].contains(arguments[2]) else { continue }
                sharpen = ImageTransformers.WaveletSharpen(amount: amount, radius: radius,
                                                           luminanceOnly: ["true", "True", "1"].contains(arguments[2]))
            case ("max_bytes", 1):
                guard let value = Self.digits(arguments[0]) else { continue }
                maxBytes = value
            case ("grayscale", 0): grayscale = true
            case ("no_upscale", 0): noUpscale = true
            case ("upscale", 0): upscale = true
            case ("stretch", 0): stretch = true
            case ("strip_exif", 0), ("strip_icc", 0): break
            default: continue
            }
        }
        if focalWeight != 0 {
            focal = .init(x: (focalX / focalWeight).rounded(.down), y: (focalY / focalWeight).rounded(.down))
        }
    }

    /// The comma-separated arguments of `name(...)`, spaces around each trimmed; `[]` for `name()`.
    private static func arguments(of piece: String, name: String) -> [String]? {
        guard piece.hasPrefix(name + "("), piece.hasSuffix(")") else { return nil }
        let inner = piece.dropFirst(name.count + 1).dropLast()
        if inner.allSatisfy({ $0 == " " }) { return [] }
        return inner.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpacesAndTabs) }
    }

    /// `[\d]+`, at most 9 digits.
    private static func digits(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// thumbor's watermark position, `(?:-?\d+p?)|center|repeat`; `nil` for what does not match.
    /// - Throws: ``ServiceError`` 400 for `repeat` (a tiled mark is not supported).
    private static func position(_ text: String) throws -> ImageParameters.Overlay.Position? {
        if text == "center" { return .center }
        if text == "repeat" { throw ServiceError.badParameter("thumbor filter 'watermark' with repeat is not supported by this service") }
        let far = text.hasPrefix("-")
        var body = far ? String(text.dropFirst()) : text
        let percent = body.hasSuffix("p")
        if percent { body.removeLast() }
        guard let value = digits(body) else { return nil }
        return percent ? .percent(value, fromFarEdge: far) : .pixels(value, fromFarEdge: far)
    }

    /// thumbor's `Number`: digits with an optional minus, bounded.
    private static func integer(_ text: String) -> Int? {
        text.hasPrefix("-") ? digits(String(text.dropFirst())).map { -$0 } : digits(text)
    }

    /// thumbor's `DecimalNumber`, bounded.
    private static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 16, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `LxT:RxB`.
    private static func rectangle(_ text: String) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let corners = text.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let a = corners[0].split(separator: "x", omittingEmptySubsequences: false).map { digits(String($0)) }
        let b = corners[1].split(separator: "x", omittingEmptySubsequences: false).map { digits(String($0)) }
        guard a.count == 2, b.count == 2, let left = a[0], let top = a[1], let right = b[0], let bottom = b[1] else { return nil }
        return (left, top, right, bottom)
    }

    /// thumbor's blur is a Gaussian of `sigma` (or `radius` when 0) cut at `radius` pixels (at
    /// most 150), normalised: the full Gaussian with the same variance blurs alike.
    static func blurSigma(radius: Int, sigma: Double) -> Double {
        let sigma = sigma == 0 ? Double(radius) : abs(sigma)
        let reach = min(radius, 150)
        guard sigma > 0 else { return 0.3 }
        var total = 0.0, moment = 0.0
        for offset in -reach...reach {
            let weight = exp(-Double(offset * offset) / (2 * sigma * sigma))
            total += weight
            moment += weight * Double(offset * offset)
        }
        return min(100, max(0.3, (moment / total).squareRoot()))
    }

    /// PIL's colour names thumbor's fills are written with, hex with or without `#` (3, 6 or 8
    /// digits), or `transparent`.
    /// - Throws: ``ServiceError`` 400 naming the filter for `auto`, `blur` or an unknown name.
    static func color(_ text: String, filter: String) throws -> RGBAColor {
        let lower = text.lowercased()
        let named: [String: String] = [
            "white": "ffffff", "black": "000000", "red": "ff0000", "lime": "00ff00", "green": "008000", "blue": "0000ff",
            "yellow": "ffff00", "gray": "808080", "grey": "808080", "silver": "c0c0c0", "orange": "ffa500",
            "purple": "800080", "navy": "000080", "teal": "008080", "maroon": "800000", "olive": "808000",
            "aqua": "00ffff", "cyan": "00ffff", "fuchsia": "ff00ff", "magenta": "ff00ff",
        ]
        if lower == "transparent" { return RGBAColor(red: 0, green: 0, blue: 0, alpha: 0) }
        var hex = named[lower] ?? (lower.hasPrefix("#") ? String(lower.dropFirst()) : lower)
        if hex.utf8.count == 3 { hex = hex.map { "\($0)\($0)" }.joined() }
        if let color = ImageParameters.Options.color(hex: hex) { return color }
        throw ServiceError.badParameter("thumbor filter '\(filter)(\(text.prefix(32)))': the colour is not supported "
            + "(hex, a basic colour name or transparent)")
    }
}
