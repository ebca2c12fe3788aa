#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// imgproxy's processing options, read as imgproxy reads them (its `options/parser`): the path
/// after the signature is split at `/`; each part holding a `:` is an option, `NAME:ARG:ARG...`,
/// applied left to right (a later one overrides an earlier one); the first part without one starts
/// the source, `plain/URL[@EXT]` or base64 (`BASE64[.EXT]`, split by `/` or not). Values are kept
/// in imgproxy's terms here; ``ImgproxyGeometry`` maps them onto ``ImageParameters/Options``.
///
/// imgproxy answers a malformed URL, an unknown option or a bad argument with 404 ("Invalid URL"),
/// and so does this parser (``invalid(_:)``). An option imgproxy knows that this service cannot
/// honour is a 400 naming it (``unsupported(_:_:)``), never a silently different image.
struct ImgproxyOptions: Sendable, Hashable {
    /// `resizing_type`.
    enum ResizingType: String, Sendable, Hashable {
        case fit, fill, fillDown = "fill-down", force, auto
    }

    /// A `gravity` (or `extend`'s, `crop`'s, `watermark`'s position): its type (`ce`, `no`,
    /// ..., `sm`, `fp`, `re`) and offsets.
    struct Gravity: Sendable, Hashable {
        var type = "ce"
        var x = 0.0
        var y = 0.0
    }

    /// `watermark:OPACITY:POSITION:X:Y:SCALE`.
    struct Watermark: Sendable, Hashable {
        var opacity: Double
        var position = "ce"
        var x = 0.0
        var y = 0.0
        var scale = 0.0
    }

    var resizingType = ResizingType.fit
    var width = 0
    var height = 0
    var minWidth = 0
    var minHeight = 0
    var zoomX = 1.0
    var zoomY = 1.0
    var dpr = 1.0
    var enlarge = false
    var extend = false
    var extendGravity = Gravity()
    var gravity = Gravity()
    var cropWidth = 0.0
    var cropHeight = 0.0
    var cropGravity: Gravity?
    var trimThreshold: Double?
    /// `trim`'s colour; `nil`: the top-left pixel's.
    var trimColor: RGBAColor?
    var trimEqualHorizontal = false
    var trimEqualVertical = false
    var padding = [0, 0, 0, 0]
    var autoRotate = true
    /// Degrees, a multiple of 90, as given (imgproxy turns clockwise).
    var rotate = 0
    var flipHorizontal = false
    var flipVertical = false
    var background: RGBAColor?
    var blur = 0.0
    var sharpen = 0.0
    var pixelate = 0
    var watermark: Watermark?
    var stripMetadata = true
    var keepCopyright = false
    var stripColorProfile = true
    var quality = 0
    /// `format_quality`: imgproxy's format names (``formatNames``) to 0...100.
    var formatQuality: [String: Int] = [:]
    var maxBytes = 0
    /// `format` or the source's `.EXT`/`@EXT`: one of ``formatNames``.
    var format: String?
    var skipProcessing: [String] = []
    var raw = false
    var expires: Int64?
    var filename: String?
    var returnAttachment = false
    /// Options imgproxy knows that this service does not (`preserve_hdr`, `extend_aspect_ratio`, ...), as named.
    var unknownToService: [String] = []

    /// The source as the URL gives it: decoded, `IMGPROXY_BASE_URL` in front.
    var source = ""

    /// imgproxy's defaults: nothing asked for.
    init() {}

    /// The longest path parsed (a source URL fits in ``ImageParameters/maxURLLength``; base64 makes it a third longer).
    static let maxPathLength = 8192
    /// The most options one URL applies, presets expanded.
    static let maxOptions = 256
    /// The longest number read.
    static let maxDigits = 18

    /// imgproxy's image type names (`imagetype`): `jpg` is `jpeg`.
    static let formatNames: Set<String> = ["jpeg", "jxl", "png", "webp", "gif", "ico", "svg", "heic", "avif", "bmp", "tiff"]

    /// imgproxy's 404 for a malformed URL or option.
    static func invalid(_ message: String) -> ServiceError {
        ServiceError(status: 404, code: "invalidURL", message: "Invalid URL: \(message)")
    }

    /// The 400 for an option imgproxy honours and this service cannot.
    static func unsupported(_ option: String, _ why: String) -> ServiceError {
        .badParameter("imgproxy option '\(option)' \(why) is not supported by this service")
    }

    /// The presets (`IMGPROXY_PRESETS`): each name's options, as URL parts.
    struct Presets: Sendable, Hashable {
        /// Each name's option parts (`rs:fill:100:100`).
        let definitions: [String: [Substring]]

        /// No presets.
        init() { definitions = [:] }

        /// Reads `NAME=OPTION/OPTION...` definitions (blank ones and `#` comments skipped), each
        /// checked by applying it.
        /// - Throws: ``ServiceError`` 400 naming a definition that is malformed.
        init(_ lines: [String]) throws {
            var definitions: [String: [Substring]] = [:]
            for line in lines {
                let text = line.trimmingSpacesAndTabs
                if text.isEmpty || text.hasPrefix("#") { continue }
                let parts = text.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw ServiceError.badParameter("IMGPROXY_PRESETS: invalid preset '\(text)'") }
                let name = parts[0].trimmingSpacesAndTabs, value = parts[1].trimmingSpacesAndTabs
                guard !name.isEmpty, !value.isEmpty else { throw ServiceError.badParameter("IMGPROXY_PRESETS: empty name or value in '\(text)'") }
                let options = value.split(separator: "/", omittingEmptySubsequences: false).map { Substring($0) }
                guard options.allSatisfy({ $0.contains(":") }) else {
                    throw ServiceError.badParameter("IMGPROXY_PRESETS: invalid preset value '\(text)'")
                }
                definitions[name] = options
            }
            self.definitions = definitions
            for name in definitions.keys {
                var check = ImgproxyOptions()
                var count = 0
                do {
                    try check.applyPreset(name, presets: self, used: [], count: &count)
                } catch let error as ServiceError {
                    throw ServiceError.badParameter("IMGPROXY_PRESETS: error in preset '\(name)': \(error.message)")
                }
            }
        }
    }

    /// The options and the source of `path` (after the signature, without its leading `/`).
    /// - Parameters:
    ///   - presets: `IMGPROXY_PRESETS` (`default` applies first, when defined).
    ///   - onlyPresets: `IMGPROXY_ONLY_PRESETS`: the first part names presets (`NAME:NAME`), no options.
    ///   - baseURL: `IMGPROXY_BASE_URL`.
    /// - Throws: ``ServiceError`` 404 for what imgproxy finds invalid, 400 for what this service cannot honour.
    init(parsing path: Substring, presets: Presets = Presets(), onlyPresets: Bool = false, baseURL: String? = nil) throws {
        guard path.utf8.count <= Self.maxPathLength else { throw Self.invalid("the path is longer than \(Self.maxPathLength) bytes") }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        var count = 0
        if presets.definitions["default"] != nil { try applyPreset("default", presets: presets, used: [], count: &count) }
        var sourceParts: ArraySlice<Substring>
        if onlyPresets {
            for name in parts[0].split(separator: ":", omittingEmptySubsequences: false) {
                try applyPreset(String(name), presets: presets, used: [], count: &count)
            }
            sourceParts = parts.dropFirst()
        } else {
            if ResizingType(rawValue: String(parts[0])) != nil {
                throw Self.invalid("it looks like the basic URL format, which imgproxy 3 removed")
            }
            sourceParts = parts[...]
            while let part = sourceParts.first, part.contains(":") {
                let (name, arguments) = Self.split(part)
                try apply(name, arguments, presets: presets, used: [], count: &count)
                sourceParts = sourceParts.dropFirst()
            }
        }
        let (source, fileExtension) = try Self.source(sourceParts)
        if let baseURL, !source.hasPrefix(baseURL) { self.source = baseURL + source } else { self.source = source }
        if let fileExtension, !raw { try setFormat(fileExtension) }
    }

    /// `NAME:ARG:ARG` as its name and arguments.
    static func split(_ part: Substring) -> (name: Substring, arguments: [Substring]) {
        let fields = part.split(separator: ":", omittingEmptySubsequences: false)
        return (fields[0], Array(fields.dropFirst()))
    }

    /// The source URL and the extension of the parts after the options: `plain/URL[@EXT]`
    /// (percent-decoded) or `BASE64[.EXT]` (its parts joined).
    /// - Throws: ``ServiceError`` 404 for an empty, undecodable or doubly extended source.
    static func source(_ parts: ArraySlice<Substring>) throws -> (String, String?) {
        guard let first = parts.first else { throw invalid("the image URL is empty") }
        if first == "plain", parts.count > 1 {
            let text = parts.dropFirst().joined(separator: "/")
            let pieces = text.split(separator: "@", omittingEmptySubsequences: false)
            guard !pieces[0].isEmpty else { throw invalid("the image URL is empty") }
            guard pieces.count <= 2 else { throw invalid("multiple formats are specified: \(text.prefix(64))") }
            guard let url = Hex.percentDecodedString(pieces[0]) else { throw invalid("invalid URL encoding: \(text.prefix(64))") }
            return (url, pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil)
        }
        let text = parts.joined()
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !pieces[0].isEmpty else { throw invalid("the image URL is empty") }
        guard pieces.count <= 2 else { throw invalid("multiple formats are specified: \(text.prefix(64))") }
        // Bounded by the path's length, so the decode is; trailing `=` dropped, as imgproxy drops them.
        guard let bytes = Base64URL.decoded(pieces[0]), let url = String(validating: bytes, as: UTF8.self) else {
            throw invalid("invalid URL encoding: \(text.prefix(64))")
        }
        return (url, pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil)
    }

    /// Applies preset `name` (once per chain: a preset naming itself is skipped, as imgproxy does).
    mutating func applyPreset(_ name: String, presets: Presets, used: [String], count: inout Int) throws {
        guard let options = presets.definitions[name] else { throw Self.invalid("unknown preset: \(name.prefix(64))") }
        guard !used.contains(name) else { return }
        for part in options {
            let (option, arguments) = Self.split(part)
            try apply(option, arguments, presets: presets, used: used + [name], count: &count)
        }
    }

    /// Applies one option, as imgproxy's `applyURLOption` does.
    mutating func apply(_ name: Substring, _ arguments: [Substring], presets: Presets, used: [String], count: inout Int) throws {
        count += 1
        guard count <= Self.maxOptions else { throw Self.invalid("more than \(Self.maxOptions) options") }
        let key = String(name)
        let args = arguments.map(String.init)
        func most(_ limit: Int) throws {
            guard args.count <= limit else { throw Self.invalid("invalid \(key) arguments: \(args.joined(separator: ":").prefix(64))") }
        }
        switch key {
        case "resize", "rs":
            try most(8)
            if !args[0].isEmpty { try setResizingType(args[0]) }
            if args.count > 1 { try applySize(Array(args.dropFirst())) }
        case "size", "s": try applySize(args)
        case "resizing_type", "rt":
            try most(1)
            try setResizingType(args[0])
        case "width", "w":
            try most(1)
            width = try Self.integer(args[0], key, minimum: 0)
        case "height", "h":
            try most(1)
            height = try Self.integer(args[0], key, minimum: 0)
        case "min-width", "mw":
            try most(1)
            minWidth = try Self.integer(args[0], key, minimum: 0)
        case "min-height", "mh":
            try most(1)
            minHeight = try Self.integer(args[0], key, minimum: 0)
        case "zoom", "z":
            try most(2)
            zoomX = try Self.decimal(args[0], key, aboveZero: true)
            zoomY = args.count > 1 ? try Self.decimal(args[1], key, aboveZero: true) : zoomX
        case "dpr":
            try most(1)
            dpr = try Self.decimal(args[0], key, aboveZero: true)
        case "enlarge", "el":
            try most(1)
            enlarge = Self.bool(args[0])
        case "extend", "ex": try applyExtend(args, key)
        case "gravity", "g": gravity = try Self.gravity(args, key, allowed: Self.cropGravities)
        case "crop", "c":
            cropWidth = try Self.decimal(args[0], key, aboveZero: false)
            if args.count > 1 { cropHeight = try Self.decimal(args[1], key, aboveZero: false) }
            if args.count > 2 { cropGravity = try Self.gravity(Array(args.dropFirst(2)), key, allowed: Self.cropGravities) }
        case "trim", "t":
            try most(4)
            trimThreshold = args[0].isEmpty ? nil : try Self.decimal(args[0], key, aboveZero: false, signed: true)
            trimColor = nil
            if args.count > 1, !args[1].isEmpty {
                guard let color = Self.hexColor(args[1]) else { throw Self.invalid("invalid trim color: \(args[1].prefix(32))") }
                trimColor = color
            }
            if args.count > 2, !args[2].isEmpty { trimEqualHorizontal = Self.bool(args[2]) }
            if args.count > 3, !args[3].isEmpty { trimEqualVertical = Self.bool(args[3]) }
        case "padding", "pd":
            try most(4)
            var sides = padding
            for index in 0..<4 {
                if index < args.count, !args[index].isEmpty {
                    sides[index] = try Self.integer(args[index], key, minimum: 0)
                } else {
                    // right copies top, bottom copies top, left copies right (imgproxy's CSS-like shorthand).
                    sides[index] = sides[index == 3 ? 1 : 0]
                }
            }
            padding = sides
        case "auto_rotate", "ar":
            try most(1)
            autoRotate = Self.bool(args[0])
        case "rotate", "rot":
            try most(1)
            let angle = try Self.integer(args[0], key, minimum: nil)
            guard angle % 90 == 0 else { throw Self.invalid("rotation angle must be a multiple of 90") }
            rotate = angle
        case "flip", "fl":
            try most(2)
            if !args[0].isEmpty { flipHorizontal = Self.bool(args[0]) }
            if args.count > 1, !args[1].isEmpty { flipVertical = Self.bool(args[1]) }
        case "background", "bg": try applyBackground(args, key)
        case "blur", "bl":
            try most(1)
            blur = try Self.decimal(args[0], key, aboveZero: false)
        case "sharpen", "sh":
            try most(1)
            sharpen = try Self.decimal(args[0], key, aboveZero: false)
        case "pixelate", "pix":
            try most(1)
            pixelate = try Self.integer(args[0], key, minimum: 0)
        case "watermark", "wm":
            try most(7)
            var mark = Watermark(opacity: try Self.decimal(args[0], key, aboveZero: false))
            guard mark.opacity <= 1 else { throw Self.invalid("invalid watermark opacity: \(args[0].prefix(32))") }
            if args.count > 1, !args[1].isEmpty {
                guard Self.watermarkGravities.contains(args[1]) else { throw Self.invalid("invalid watermark position: \(args[1].prefix(32))") }
                mark.position = args[1]
            }
            if args.count > 2, !args[2].isEmpty { mark.x = try Self.decimal(args[2], key, aboveZero: false, signed: true) }
            if args.count > 3, !args[3].isEmpty { mark.y = try Self.decimal(args[3], key, aboveZero: false, signed: true) }
            if args.count > 4, !args[4].isEmpty { mark.scale = try Self.decimal(args[4], key, aboveZero: true) }
            watermark = mark
        case "strip_metadata", "sm":
            try most(1)
            stripMetadata = Self.bool(args[0])
        case "keep_copyright", "kcr":
            try most(1)
            keepCopyright = Self.bool(args[0])
        case "strip_color_profile", "scp":
            try most(1)
            stripColorProfile = Self.bool(args[0])
        case "quality", "q":
            try most(1)
            quality = try Self.quality(args[0], key)
        case "format_quality", "fq":
            guard args.count % 2 == 0 else { throw Self.invalid("missing quality for: \(args[args.count - 1].prefix(32))") }
            for index in stride(from: 0, to: args.count, by: 2) {
                guard let format = Self.formatName(args[index]) else { throw Self.invalid("invalid image format: \(args[index].prefix(32))") }
                formatQuality[format] = try Self.quality(args[index + 1], key)
            }
        case "max_bytes", "mb":
            try most(1)
            maxBytes = try Self.integer(args[0], key, minimum: 0)
        case "format", "f", "ext":
            try most(1)
            try setFormat(args[0])
        case "skip_processing", "skp":
            for name in args {
                guard let format = Self.formatName(name) else { throw Self.invalid("invalid image format in skip_processing: \(name.prefix(32))") }
                skipProcessing.append(format)
            }
        case "raw":
            try most(1)
            raw = Self.bool(args[0])
        case "cachebuster", "cb":
            // Only changes the URL (and so its signature and every cache key made from it).
            try most(1)
        case "expires", "exp":
            try most(1)
            guard let timestamp = Int64(args[0]) else { throw Self.invalid("invalid expires: \(args[0].prefix(32)) (expected unix timestamp)") }
            if timestamp > 0, Double(timestamp) < Date().timeIntervalSince1970 { throw Self.invalid("expired URL") }
            expires = timestamp
        case "filename", "fn":
            try most(2)
            if args.count > 1, Self.bool(args[1]) {
                guard let bytes = Base64URL.decoded(Substring(args[0])), let name = String(validating: bytes, as: UTF8.self) else {
                    throw Self.invalid("invalid filename: \(args[0].prefix(32)) (expected URL-safe base64-encoded string)")
                }
                filename = name
            } else {
                filename = args[0]
            }
        case "return_attachment", "att":
            try most(1)
            returnAttachment = Self.bool(args[0])
        case "preset", "pr":
            for preset in args { try applyPreset(preset, presets: presets, used: used, count: &count) }
        case "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf",
             "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd":
            // imgproxy's answer unless IMGPROXY_ALLOW_SECURITY_OPTIONS, which this service does not read.
            throw ServiceError(status: 403, code: "forbidden", message: "Invalid URL: security processing options are not allowed")
        case "extend_aspect_ratio", "extend_ar", "exar", "preserve_hdr", "ph", "enforce_thumbnail", "eth":
            unknownToService.append(key)
        default:
            throw Self.invalid("unknown processing option \(key.prefix(64))")
        }
    }

    /// `size:W:H:ENLARGE:EXTEND:GRAVITY...`, each part optional.
    private mutating func applySize(_ args: [String]) throws {
        guard args.count <= 7 else { throw Self.invalid("invalid size arguments: \(args.joined(separator: ":").prefix(64))") }
        if args.count > 0, !args[0].isEmpty { width = try Self.integer(args[0], "width", minimum: 0) }
        if args.count > 1, !args[1].isEmpty { height = try Self.integer(args[1], "height", minimum: 0) }
        if args.count > 2, !args[2].isEmpty { enlarge = Self.bool(args[2]) }
        if args.count > 3, !args[3].isEmpty { try applyExtend(Array(args.dropFirst(3)), "extend") }
    }

    /// `extend:EXTEND:GRAVITY:X:Y`.
    private mutating func applyExtend(_ args: [String], _ key: String) throws {
        guard args.count <= 4 else { throw Self.invalid("invalid \(key) arguments: \(args.joined(separator: ":").prefix(64))") }
        extend = Self.bool(args[0])
        if args.count > 1 { extendGravity = try Self.gravity(Array(args.dropFirst()), key, allowed: Self.extendGravities) }
    }

    /// `background:RRGGBB`, `background:R:G:B`, or `background:` (none).
    private mutating func applyBackground(_ args: [String], _ key: String) throws {
        switch args.count {
        case 1 where args[0].isEmpty:
            background = nil
        case 1:
            guard let color = Self.hexColor(args[0]) else {
                throw Self.invalid("invalid background: \(args[0].prefix(32)) (expected hex-encoded color)")
            }
            background = color
        case 3:
            var channels: [UInt8] = []
            for value in args {
                guard value.utf8.count <= 3, let channel = UInt8(value) else { throw Self.invalid("invalid background: \(value.prefix(32)) (expected number in range 0-255)") }
                channels.append(channel)
            }
            background = RGBAColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw Self.invalid("invalid background arguments: \(args.joined(separator: ":").prefix(64))")
        }
    }

    /// imgproxy's hex colours: RGB, RRGGBB (its alpha forms are not RGB).
    static func hexColor(_ text: String) -> RGBAColor? {
        var text = text
        if text.utf8.count == 3 { text = text.map { "\($0)\($0)" }.joined() }
        guard text.utf8.count == 6 else { return nil }
        return ImageParameters.Options.color(hex: text)
    }

    private mutating func setResizingType(_ text: String) throws {
        guard let type = ResizingType(rawValue: text) else {
            throw Self.invalid("invalid resizing_type: \(text.prefix(32)) (expected fit, fill, fill-down, force or auto)")
        }
        resizingType = type
    }

    private mutating func setFormat(_ text: String) throws {
        guard let name = Self.formatName(text) else { throw Self.invalid("invalid format: \(text.prefix(32)) (expected supported image format)") }
        format = name
    }

    /// imgproxy's name of format `text` (`jpg` is `jpeg`), `nil` for none it knows.
    static func formatName(_ text: String) -> String? {
        let name = text == "jpg" ? "jpeg" : text
        return formatNames.contains(name) ? name : nil
    }

    static let commonGravities: Set<String> = ["ce", "no", "ea", "so", "we", "nowe", "noea", "sowe", "soea"]
    static let cropGravities = commonGravities.union(["sm", "fp"])
    static let extendGravities = commonGravities.union(["fp"])
    static let watermarkGravities = commonGravities.union(["re"])

    /// `TYPE[:X:Y]`: `sm` takes no offsets, `fp` takes both, each in 0...1.
    static func gravity(_ args: [String], _ key: String, allowed: Set<String>) throws -> Gravity {
        guard let type = args.first, allowed.contains(type) else {
            throw invalid("invalid \(key): \(args.first?.prefix(32) ?? "") (expected one of \(allowed.sorted().joined(separator: ", ")))")
        }
        var gravity = Gravity(type: type)
        switch type {
        case "sm": guard args.count == 1 else { throw invalid("invalid \(key) arguments: \(args.joined(separator: ":").prefix(64))") }
        case "fp": guard args.count == 3 else { throw invalid("invalid \(key) arguments: \(args.joined(separator: ":").prefix(64))") }
        default: guard args.count <= 3 else { throw invalid("invalid \(key) arguments: \(args.joined(separator: ":").prefix(64))") }
        }
        if args.count > 1, !args[1].isEmpty { gravity.x = try decimal(args[1], key, aboveZero: false, signed: type != "fp") }
        if args.count > 2, !args[2].isEmpty { gravity.y = try decimal(args[2], key, aboveZero: false, signed: type != "fp") }
        if type == "fp", gravity.x > 1 || gravity.y > 1 { throw invalid("invalid \(key) offset: a focus point lies in 0...1") }
        return gravity
    }

    /// Go's `strconv.ParseBool`; anything else is false, as imgproxy reads it (with a warning).
    static func bool(_ text: String) -> Bool {
        ["1", "t", "T", "true", "TRUE", "True"].contains(text)
    }

    /// A decimal integer (`strconv.Atoi`), at least `minimum` when one is given.
    static func integer(_ text: String, _ key: String, minimum: Int?) throws -> Int {
        guard text.utf8.count <= maxDigits, let value = Int(text), minimum.map({ value >= $0 }) ?? true else {
            throw invalid("invalid \(key): \(text.prefix(32)) (expected \(minimum == nil ? "integer number" : "positive number or 0"))")
        }
        return value
    }

    /// A decimal number: digits, one `.`, a sign when `signed`; 0 or more, above 0 when `aboveZero`.
    static func decimal(_ text: String, _ key: String, aboveZero: Bool, signed: Bool = false) throws -> Double {
        let digits = signed && (text.hasPrefix("-") || text.hasPrefix("+")) ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.count <= maxDigits, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(text), value.isFinite, aboveZero ? value > 0 : (signed || value >= 0) else {
            throw invalid("invalid \(key): \(text.prefix(32)) (expected \(aboveZero ? "positive number" : "number"))")
        }
        return value
    }

    /// A quality, 0...100 (0: the default).
    static func quality(_ text: String, _ key: String) throws -> Int {
        guard text.utf8.count <= 3, let value = Int(text), (0...100).contains(value) else {
            throw invalid("invalid \(key): \(text.prefix(32)) (expected number in range 0-100)")
        }
        return value
    }
}
