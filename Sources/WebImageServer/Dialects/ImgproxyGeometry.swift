import WebImage

/// imgproxy's options (``ImgproxyOptions``) as the service's request value
/// (``ImageParameters/Options``), so the output has imgproxy's size, crop and format for the same
/// URL (its `processing/prepare.go`):
/// - `fit`: the image inside the box (`contain`); `fill`: the box covered and cropped by gravity
///   (`cover`), without `enlarge` the box first clamped to the image side by side, as imgproxy
///   crops a small image to at most the box; `fill-down`: `cover`, whose crop of a small image
///   keeps the box's aspect ratio at the image's scale; `force`: stretched to the box (`fill`),
///   without `enlarge` the box first scaled down, aspect kept, into the image; `auto`: `fill`
///   when the image and the box are both landscape (or square) or both portrait, else `fit`.
///   One side 0: that side from the aspect ratio. `dpr` and `zoom` multiply the box.
/// - `extend`: the result placed on a canvas of the box's size (transparent, or `background`).
/// - no format: the source's own (imgproxy never negotiates unless `IMGPROXY_ENFORCE_WEBP`/`AVIF`).
enum ImgproxyGeometry {
    /// The request value's options for `options`, under `settings`.
    /// - Throws: ``ServiceError`` 400 naming what cannot be honoured, 422 for an output format
    ///   this service cannot write (imgproxy's status for one it cannot save).
    static func options(_ options: ImgproxyOptions, settings: ImgproxySettings) throws -> ImageParameters.Options {
        try refuseUnsupported(options)
        var result = ImageParameters.Options()
        // The box: imgproxy's target is the size times dpr times zoom, rounded.
        func side(_ value: Int, zoom: Double, name: String) throws -> Int? {
            guard value > 0 else { return nil }
            let scaled = (Double(value) * options.dpr * zoom).rounded()
            guard scaled <= Double(ImageParameters.maxSide) else {
                throw ServiceError.badParameter("imgproxy \(name) \(value) (times dpr and zoom) is over this service's \(ImageParameters.maxSide)")
            }
            return max(1, Int(scaled))
        }
        result.width = try side(options.width, zoom: options.zoomX, name: "width")
        result.height = try side(options.height, zoom: options.zoomY, name: "height")
        result.dpr = options.dpr
        // Not scaled by dpr, as imgproxy applies it.
        if options.pixelate > 1 { result.pixelate = options.pixelate }
        if let threshold = options.trimThreshold {
            // libvips' find_trim on the image flattened on magenta, as imgproxy calls it; not on animations.
            result.trim = ImageTransformers.Trim(reference: options.trimColor.map { .color($0) } ?? .topLeft, tolerance: threshold,
                                                 measure: .smoothedChannels(flattenedOn: RGBAColor(red: 255, green: 0, blue: 255)),
                                                 equalHorizontal: options.trimEqualHorizontal, equalVertical: options.trimEqualVertical)
            result.trimsAsStored = true
        }
        if options.padding.contains(where: { $0 > 0 }) {
            // imgproxy scales the padding with dpr, as the box.
            result.padding = try options.padding.map { try side($0, zoom: 1, name: "padding") ?? 0 }
        }
        result.enlarge = options.enlarge
        if result.width != nil, result.height != nil {
            switch options.resizingType {
            case .fit:
                result.fit = .contain
            case .fill:
                result.fit = .cover
                result.boxWithinSource = !options.enlarge
            case .fillDown:
                // The service's cover of a small image is imgproxy's fill-down already.
                result.fit = .cover
            case .force:
                result.fit = .fill
                result.boxScaledWithinSource = !options.enlarge
            case .auto:
                // Decided on the image's orientation; `cover` here so a thumbnail decode is large enough for either.
                result.fit = .cover
                result.fitsByOrientation = true
                result.boxWithinSource = !options.enlarge
            }
        } else if options.resizingType == .force, result.width != nil || result.height != nil {
            throw ImgproxyOptions.unsupported("resizing_type:force", "with one side 0 (the other kept as the source's)")
        }
        switch options.gravity.type {
        case "sm": result.smartGravity = true
        case "fp": result.gravity = .focus(x: options.gravity.x, y: options.gravity.y)
        default: result.gravity = gravity(options.gravity.type)
        }
        if options.extend, result.width != nil || result.height != nil {
            result.extendsToBox = true
            if options.extendGravity != options.gravity {
                // One gravity places both the crop of a cover and the canvas of the extension;
                // a fit has no crop, so the extension's may take its place.
                guard options.resizingType == .fit || result.width == nil || result.height == nil else {
                    throw ImgproxyOptions.unsupported("extend", "with a gravity other than the gravity option's")
                }
                result.gravity = options.extendGravity.type == "fp"
                    ? .focus(x: options.extendGravity.x, y: options.extendGravity.y) : gravity(options.extendGravity.type)
                result.smartGravity = false
            }
        }
        if options.cropWidth > 0 || options.cropHeight > 0 {
            // Its own gravity, else the gravity option's, as imgproxy places it.
            let placement = options.cropGravity ?? options.gravity
            result.sizedCrop = .init(width: options.cropWidth, height: options.cropHeight,
                                     gravity: placement.type == "fp" ? .focus(x: placement.x, y: placement.y) : gravity(placement.type))
        }
        result.rotate = (options.rotate % 360 + 360) % 360
        result.flipHorizontal = options.flipHorizontal
        result.flipVertical = options.flipVertical
        if let background = options.background {
            // imgproxy fills the background of every output with it, alpha or not.
            result.background = background
            result.flattensAlways = true
        }
        if options.blur > 0 { result.blur = options.blur }
        // One rule for both dialects (thumbor's): three quarters of the quality until it fits.
        if options.maxBytes > 0 { result.maxBytes = options.maxBytes }
        if options.sharpen > 0 { result.sharpen = options.sharpen }
        if let mark = options.watermark, mark.opacity > 0 {
            result.watermark = .init(opacity: mark.opacity, gravity: gravity(mark.position), scale: mark.scale)
        }
        try format(options, settings: settings, into: &result)
        return result
    }

    /// The output format and quality: the URL's format (or the source's), or under
    /// `IMGPROXY_ENFORCE_WEBP`/`AVIF` that format when `Accept` allows it.
    private static func format(_ options: ImgproxyOptions, settings: ImgproxySettings, into result: inout ImageParameters.Options) throws {
        var fixed: RequestedFormat?
        if let name = options.format {
            switch name {
            case "jpeg": fixed = .jpeg
            case "png": fixed = .png
            case "webp": fixed = .webp
            case "avif": fixed = .avif
            case "gif": fixed = .gif
            case "jxl": fixed = .jxl
            default:
                throw ServiceError(status: 422, code: "unsupportedFormat", message: "Resulting image format is not supported: \(name)")
            }
        }
        var enforced: [ImageFormat] = []
        if settings.enforceAVIF { enforced.append(.avif) }
        if settings.enforceWebP { enforced.append(.webp) }
        if let fixed, enforced.isEmpty || enforced.contains(where: { $0.rawValue == fixed.rawValue }) {
            result.format = fixed
        } else {
            result.format = .auto
            result.autoFormats = enforced
            result.autoFallback = fixed ?? .auto
        }
        if options.quality > 0 {
            result.quality = options.quality
        } else if let name = options.format, let quality = options.formatQuality[name] {
            result.quality = quality > 0 ? quality : nil
        } else if options.format == nil, !options.formatQuality.isEmpty {
            // The output's format is known only once the source is: one quality for all is honoured.
            let qualities = Set(options.formatQuality.values)
            guard qualities.count == 1, let quality = qualities.first else {
                throw ImgproxyOptions.unsupported("format_quality", "with differing qualities and no format in the URL")
            }
            result.quality = quality > 0 ? quality : nil
        }
    }

    /// The headers imgproxy adds for `filename` and `return_attachment`: `Content-Disposition`,
    /// the name (the source's last path segment without its extension, by default) with the
    /// output format's extension when the URL fixes it.
    static func headers(_ options: ImgproxyOptions, format: RequestedFormat) -> [(name: String, value: String)] {
        guard options.filename != nil || options.returnAttachment else { return [] }
        var name = options.filename ?? ""
        if name.isEmpty {
            let last = options.source.split(separator: "?").first.flatMap { $0.split(separator: "/").last } ?? "image"
            name = String(last.split(separator: ".").first ?? "image")
            if name.isEmpty { name = "image" }
        }
        let ext = format == .auto ? "" : "." + (format == .jpeg ? "jpg" : format.rawValue)
        let quoted = (name + ext).unicodeScalars.map { $0 == "\"" ? "\\\"" : $0.value < 0x20 || $0.value == 0x7f ? "_" : String($0) }.joined()
        return [("Content-Disposition", "\(options.returnAttachment ? "attachment" : "inline"); filename=\"\(quoted)\"")]
    }

    /// imgproxy's compass gravities as the service's.
    static func gravity(_ type: String) -> ImageTransformers.Gravity {
        switch type {
        case "no": .top
        case "so": .bottom
        case "ea": .right
        case "we": .left
        case "noea": .topRight
        case "nowe": .topLeft
        case "soea": .bottomRight
        case "sowe": .bottomLeft
        default: .center
        }
    }

    /// A 400 naming the first option asked for that this service cannot honour.
    private static func refuseUnsupported(_ options: ImgproxyOptions) throws {
        if let name = options.unknownToService.first { throw ImgproxyOptions.unsupported(name, "") }
        if !options.skipProcessing.isEmpty { throw ImgproxyOptions.unsupported("skip_processing", "") }
        if options.raw { throw ImgproxyOptions.unsupported("raw", "") }
        if options.minWidth > 0 || options.minHeight > 0 { throw ImgproxyOptions.unsupported("min-width/min-height", "") }
        if options.cropGravity?.type ?? options.gravity.type == "sm", options.cropWidth > 0 || options.cropHeight > 0 {
            throw ImgproxyOptions.unsupported("crop", "with smart gravity")
        }
        if let gravity = options.cropGravity, gravity.type != "fp", gravity.x != 0 || gravity.y != 0 {
            throw ImgproxyOptions.unsupported("crop", "with gravity offsets")
        }
        if !options.autoRotate { throw ImgproxyOptions.unsupported("auto_rotate:false", "(the EXIF orientation is always applied)") }
        if !options.stripMetadata || options.keepCopyright {
            throw ImgproxyOptions.unsupported("strip_metadata:false/keep_copyright", "(outputs never carry metadata)")
        }
        if !options.stripColorProfile { throw ImgproxyOptions.unsupported("strip_color_profile:false", "(outputs are sRGB without a profile)") }
        if options.zoomX != options.zoomY { throw ImgproxyOptions.unsupported("zoom", "with two factors") }
        if options.zoomX != 1, options.width == 0, options.height == 0 { throw ImgproxyOptions.unsupported("zoom", "without a width or height") }
        if options.gravity.type != "fp", options.gravity.x != 0 || options.gravity.y != 0 {
            throw ImgproxyOptions.unsupported("gravity", "with offsets")
        }
        if options.extendGravity.type != "fp", options.extendGravity.x != 0 || options.extendGravity.y != 0 {
            throw ImgproxyOptions.unsupported("extend", "with gravity offsets")
        }
        if options.blur > 0, !(0.3...100).contains(options.blur) { throw ImgproxyOptions.unsupported("blur", "with a sigma outside 0.3...100") }
        if options.sharpen > 0, !(0.3...10).contains(options.sharpen) {
            throw ImgproxyOptions.unsupported("sharpen", "with a sigma outside 0.3...10")
        }
        if let mark = options.watermark, mark.opacity > 0 {
            if mark.position == "re" { throw ImgproxyOptions.unsupported("watermark", "replicated (re)") }
            if mark.x != 0 || mark.y != 0 { throw ImgproxyOptions.unsupported("watermark", "with offsets") }
            guard (0.05...1).contains(mark.scale) else {
                throw ImgproxyOptions.unsupported("watermark", "without a scale in 0.05...1 (at its own size)")
            }
        }
    }
}
