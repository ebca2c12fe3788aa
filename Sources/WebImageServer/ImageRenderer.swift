#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Decode, transform, encode: one source's bytes to one response body. Synchronous CPU work, run
/// in a slot of the process's CPU budget by the service.
///
/// The order of operations: orientation (in the decode) → a trim (thumbor's and imgproxy's) → `crop` → `rotate`/`flip` → a sized
/// crop (imgproxy's `crop`) → resize (`fit`, `gravity` or `focus`, `dpr`) → the extension to the
/// box (imgproxy's `extend`) → `blur` → `sharpen` → a wavelet sharpen (thumbor's) → pixelate (imgproxy's) → grey → watermark → flatten on `bg` (an output
/// without alpha, or always) → encode.
struct ImageRenderer: Sendable {
    let coders: ImageCodersManager
    let maxSourcePixels: Int
    /// The most bytes all decoded frames of an animation may take.
    let animationByteLimit: Int
    /// `--quality` and `--watermark`.
    var settings = RenderSettings()
    /// `--max-animation-frames` (the decode stops after them) and `--max-result-pixels`
    /// (checked again on the decoded frames, before any transform).
    var limits = RenderLimits.unlimited

    /// Renders `source` for `parameters`; `sourceValidators` (the source's ETag or Last-Modified,
    /// or a hash of its bytes) and the options make the strong ETag.
    func render(_ source: Data, sourceValidators: String, parameters: ImageParameters,
                choice negotiated: FormatNegotiation.Choice, stages: RenderStages = .untraced, overlay: Data? = nil) throws -> EncodedImage {
        let detection = FormatDetection(source)
        let choice = Self.choice(negotiated, fallback: parameters.autoFallback, source: detection.format)
        let keepsFrames = FormatNegotiation.canAnimate(
            FormatNegotiation.format(for: choice, isAnimated: detection.isAnimated, hasAlpha: false))
        var options = DecodeOptions(pixelLimit: maxSourcePixels, firstFrameOnly: !keepsFrames, applyOrientation: true,
                                    animationByteLimit: animationByteLimit, parallelDecoding: false,
                                    maxFrameCount: limits.maxAnimationFrames)
        options.stop = stages.stop
        // A thumbnail decode (JPEG scales in the DCT) when the box is known; checked afterwards
        // against what the resize needs, and decoded again at full size when it fell short.
        // Not with `crop`: its rectangle is in the source's own pixels.
        // Nor with the options that read the source's own size or pixels (thumbor's, #45).
        let readsSourcePixels = parameters.focalPoint != nil || parameters.adaptsOrientation || parameters.boxWithinSource
            || parameters.boxScaledWithinSource || parameters.sizedCrop != nil || parameters.trim != nil
        options.maxPixelSize = parameters.crop != nil || readsSourcePixels ? nil
            : Self.decodeSide(parameters, sourceSize: detection.declaredSize(of: source), isJPEG: detection.format == .jpeg)
        // An animation the encoder takes frame by frame is decoded lazily: each frame is decoded,
        // transformed and encoded in turn, one in memory at a time (``streamsFrames(_:choice:)``).
        let streams = keepsFrames && detection.isAnimated && Self.streamsFrames(parameters, choice: choice)
        let decode = { (options: DecodeOptions) throws -> DecodedImage in
            try streams ? coders.decodeForDisplay(source, options: options) : coders.decode(source, options: options)
        }
        var image = try stages.run("decode") { span in
            span.attributes["webimage.source.bytes"] = source.count
            var image = try decode(options)
            if let side = options.maxPixelSize, max(image.width, image.height) >= side, !Self.isLargeEnough(image, for: parameters) {
                options.maxPixelSize = nil
                try stages.checkpoint()
                image = try decode(options)
            }
            span.attributes["webimage.decoded.width"] = image.width
            span.attributes["webimage.decoded.height"] = image.height
            span.attributes["webimage.decoded.frames"] = image.animation?.frameCount ?? image.frames.count
            return image
        }
        // The header's frame count may have been unreadable: the frames decoded are counted.
        try limits.checkResult(width: Double(image.width), height: Double(image.height),
                               frames: keepsFrames ? image.animation?.frameCount ?? image.frames.count : 1, parameters: parameters)
        let format = try stages.run("transform") { span in
            // imgproxy trims the source as stored, before its orientation: the header says which it had.
            let storedOrientation = parameters.trimsAsStored ? (try? ImageInfo.read(from: source))?.orientation ?? .up : .up
            image = try transform(image, for: parameters, storedOrientation: storedOrientation, checkpoint: stages.checkpoint, stop: stages.stop)
            if let options = parameters.overlay, let overlay {
                try stages.checkpoint()
                image = try image.applying(try Self.overlay(options, mark: overlay, on: (image.width, image.height), coders: coders))
            }
            let format = FormatNegotiation.format(for: choice, isAnimated: image.isAnimated, hasAlpha: image.hasAlpha)
            if parameters.flattensAlways || !FormatNegotiation.keepsAlpha(format) {
                try stages.checkpoint()
                image = try image.applying(ImageTransformers.Flatten(color: parameters.background))
            }
            span.attributes["webimage.output.width"] = image.width
            span.attributes["webimage.output.height"] = image.height
            return format
        }
        let body = try stages.run("encode") { span in
            let quality = parameters.quality ?? settings.quality(for: format)
            var encodeOptions = EncodeOptions(quality: Double(quality) / 100, firstFrameOnly: !FormatNegotiation.canAnimate(format),
                                              progressive: parameters.progressive)
            encodeOptions.stop = stages.stop
            var body = try coders.encode(image, format: format, options: encodeOptions)
            if let maxBytes = parameters.maxBytes, body.count > maxBytes, format == .jpeg || format == .webp {
                body = try Self.fitted(body, within: maxBytes, quality: quality) { quality in
                    try stages.checkpoint()
                    encodeOptions.quality = Double(quality) / 100
                    return try coders.encode(image, format: format, options: encodeOptions)
                }
            }
            span.attributes["webimage.output.format"] = format.rawValue
            span.attributes["webimage.output.bytes"] = body.count
            return body
        }
        let etag = Self.etag(sourceValidators: sourceValidators, parameters: parameters, format: format,
                             settings: settings.keySuffix(for: parameters))
        return EncodedImage(body: body, contentType: format.mimeType ?? "application/octet-stream", etag: etag)
    }

    /// thumbor's watermark: the mark decoded (at most ``ImageParameters/Overlay/maxMarkPixels``),
    /// its alpha lowered by the transparency, scaled into the ratios of `size`, and placed as
    /// thumbor places it (a percent rounded half to even, `-N` from the far edge, `center` truncated).
    static func overlay(_ options: ImageParameters.Overlay, mark data: Data, on size: (width: Int, height: Int),
                        coders: ImageCodersManager) throws -> ImageTransformers.Overlay {
        var mark = try coders.decode(data, options: DecodeOptions(pixelLimit: ImageParameters.Overlay.maxMarkPixels, firstFrameOnly: true,
                                                                  applyOrientation: true)).bitmap
        let lowered = 255 * options.transparency / 100
        if lowered > 0 {
            mark = try mark.withUnsafeBytes { source in
                try Bitmap(width: mark.width, height: mark.height) { target in
                    target.copyMemory(from: source)
                    for alpha in stride(from: 3, to: target.count, by: 4) { target[alpha] = UInt8(max(0, Int(target[alpha]) - lowered)) }
                }
            }
        }
        let (width, height) = (Double(size.width), Double(size.height))
        if options.widthPercent != nil || options.heightPercent != nil {
            let (markWidth, markHeight) = (Double(mark.width), Double(mark.height))
            var maxWidth = options.widthPercent.map { width * Double($0) / 100 }
            var maxHeight = options.heightPercent.map { height * Double($0) / 100 }
            if maxWidth == nil, let maxHeight { maxWidth = markWidth * maxHeight / markHeight }
            if maxHeight == nil, let maxWidth { maxHeight = markHeight * maxWidth / markWidth }
            if let maxWidth, let maxHeight, maxWidth > 0, maxHeight > 0 {
                let scaled = markWidth / maxWidth >= markHeight / maxHeight
                    ? (width: maxWidth.rounded(.toNearestOrEven), height: (markHeight * maxWidth / markWidth).rounded(.toNearestOrEven))
                    : (width: (markWidth * maxHeight / markHeight).rounded(.toNearestOrEven), height: maxHeight.rounded(.toNearestOrEven))
                if scaled.width >= 1, scaled.height >= 1, scaled.width * scaled.height <= Double(ImageParameters.Overlay.maxMarkPixels) {
                    mark = try DecodedImage(bitmap: mark, hasAlpha: true)
                        .applying(ResizeTransformer(width: Int(scaled.width), height: Int(scaled.height), mode: .exact, allowUpscaling: true)).bitmap
                }
            }
        }
        func place(_ position: ImageParameters.Overlay.Position, side: Int, mark: Int) -> Int {
            switch position {
            case .center: return (side - mark) / 2
            case let .pixels(value, far): return far ? side - mark - value : value
            case let .percent(value, far):
                let pixels = Int((Double(side) * Double(value) / 100 + 1e-5).rounded(.toNearestOrEven))
                return far ? side - mark - pixels : pixels
            }
        }
        return ImageTransformers.Overlay(mark: mark, markName: options.key, x: place(options.x, side: size.width, mark: mark.width),
                                         y: place(options.y, side: size.height, mark: mark.height))
    }

    /// A canvas `insets` (top, right, bottom, left) larger than a `width` × `height` image, the
    /// image at (left, top): a pad whose gravity is the point the image's centre lands on.
    static func padding(_ insets: [Int], width: Int, height: Int, color: RGBAColor) -> ImageTransformers.Pad {
        let canvas = (width: width + insets[1] + insets[3], height: height + insets[0] + insets[2])
        let centre = (x: (Double(insets[3]) + Double(width) / 2) / Double(canvas.width),
                      y: (Double(insets[0]) + Double(height) / 2) / Double(canvas.height))
        return ImageTransformers.Pad(width: canvas.width, height: canvas.height, color: color, gravity: .focus(x: centre.x, y: centre.y))
    }

    /// `body` encoded again by `encode` at three quarters of the quality each time until it is
    /// at most `maxBytes`; when the quality would fall under 10, `body` as it was (thumbor's rule).
    static func fitted(_ body: Data, within maxBytes: Int, quality: Int, encode: (Int) throws -> Data) throws -> Data {
        var result = body, quality = quality
        while result.count > maxBytes {
            quality = quality * 3 / 4
            guard quality >= 10 else { return body }
            result = try encode(quality)
        }
        return result
    }

    /// `negotiated` with `auto`'s fallback (``ImageParameters/Options/autoFallback``) in place of
    /// JPEG or PNG when `Accept` named none of the formats tried: a fixed format, or the
    /// source's own when the service writes it.
    static func choice(_ negotiated: FormatNegotiation.Choice, fallback: RequestedFormat?, source: ImageFormat) -> FormatNegotiation.Choice {
        guard negotiated.still == nil, let fallback else { return negotiated }
        let still: ImageFormat? = switch fallback {
        case .auto: [.jpeg, .png, .webp, .gif].contains(source) ? source : nil
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .gif: .gif
        case .jxl: .jxl
        }
        return FormatNegotiation.Choice(still: still, animated: negotiated.animated)
    }

    /// Whether an animation kept animated for `parameters` negotiated to `choice` streams its
    /// frames: decoded, transformed and encoded one at a time. The animated WebP encoder takes
    /// frames one by one; GIF's palette choice looks at every frame first, so a GIF holds them
    /// all. A smart crop stays on the held path, as it always chose its window.
    static func streamsFrames(_ parameters: ImageParameters, choice: FormatNegotiation.Choice) -> Bool {
        FormatNegotiation.format(for: choice, isAnimated: true, hasAlpha: true) == .webp && !parameters.smartGravity
    }

    /// The output cache key of `parameters` negotiated to `choice`: the source, the options, the
    /// choice and the service's settings the render uses.
    func outputKey(_ parameters: ImageParameters, choice: FormatNegotiation.Choice) -> String {
        "\(parameters.url.absoluteString)\n\(parameters.renderKey)\n\(choice.rawValue)\(settings.keySuffix(for: parameters))"
    }

    /// The decoded (and oriented) `image` through every step `parameters` ask for, in the
    /// documented order, up to the flatten (to a lazily decoded animation's frames as they are decoded); `checkpoint` runs before each step (a cancelled
    /// render stops there rather than at the end of the transform).
    /// - Throws: ``ServiceError`` 400 for a `crop` wholly outside the image or a `wm` without a
    ///   `--watermark`; the transformers' errors; what `checkpoint` throws.
    /// `stop` ends a resize inside itself, between bands of rows.
    func transform(_ decoded: DecodedImage, for parameters: ImageParameters, storedOrientation: ImageOrientation = .up,
                   checkpoint: () throws -> Void = {}, stop: StopFlag = StopFlag()) throws -> DecodedImage {
        var image = decoded
        try checkpoint()
        var crop = parameters.crop
        var focalPoint = parameters.focalPoint
        var trim = parameters.trim
        trim?.storedOrientation = storedOrientation
        trim?.stop = stop
        if let trim, !image.isAnimated, let box = trim.bounds(in: image.bitmap) {
            // A search ended by the deadline reported no box to cut: stop here.
            try checkpoint()
            image = try image.applying(ImageTransformers.Crop(x: box.x, y: box.y, width: box.width, height: box.height))
            // As thumbor: the crop's corners and the focal point move with the image.
            crop = crop.map { ImageTransformers.Crop(x: $0.x - box.x, y: $0.y - box.y, width: $0.width, height: $0.height) }
            focalPoint = focalPoint.map { ImageParameters.PixelPoint(x: $0.x - Double(box.x), y: $0.y - Double(box.y)) }
        }
        let sourceSize = (width: image.width, height: image.height)
        if parameters.ignoresCropOutside, let outside = crop {
            // As thumbor: the corners kept inside the image, and an empty rectangle no crop.
            let left = min(max(outside.x, 0), image.width), top = min(max(outside.y, 0), image.height)
            let right = min(max(outside.x + outside.width, 0), image.width), bottom = min(max(outside.y + outside.height, 0), image.height)
            crop = right > left && bottom > top ? ImageTransformers.Crop(x: left, y: top, width: right - left, height: bottom - top) : nil
        }
        if let crop {
            guard crop.x < image.width, crop.y < image.height else {
                throw ServiceError.badParameter("'crop' \(crop.x),\(crop.y),\(crop.width),\(crop.height) lies outside the "
                    + "\(image.width)×\(image.height) image")
            }
            image = try image.applying(crop)
        }
        let focus = focalPoint.flatMap { point in
            Self.focus(point, crop: crop, croppedWidth: image.width, croppedHeight: image.height,
                       rotate: parameters.rotate, flipHorizontal: parameters.flipHorizontal, flipVertical: parameters.flipVertical)
        }
        if parameters.rotate != 0 {
            try checkpoint()
            image = try image.applying(ImageTransformers.Rotate(degrees: Double(parameters.rotate)))
        }
        if parameters.flipHorizontal {
            try checkpoint()
            image = try image.applying(ImageTransformers.Flip(.horizontal))
        }
        if parameters.flipVertical {
            try checkpoint()
            image = try image.applying(ImageTransformers.Flip(.vertical))
        }
        var boxLimit = sourceSize
        if let crop = parameters.sizedCrop {
            let width = crop.pixels(crop.width, of: image.width), height = crop.pixels(crop.height, of: image.height)
            if width < image.width || height < image.height {
                try checkpoint()
                let origin = crop.gravity.origin(inner: (width, height), outer: (image.width, image.height))
                image = try image.applying(ImageTransformers.Crop(x: min(max(0, origin.x), image.width - width),
                                                                  y: min(max(0, origin.y), image.height - height),
                                                                  width: width, height: height))
            }
            // imgproxy clamps its box to the cropped image: given as the unturned size `placed` turns.
            let turned = parameters.rotate == 90 || parameters.rotate == 270
            boxLimit = turned ? (image.height, image.width) : (image.width, image.height)
        }
        let placed = Self.placed(parameters, width: image.width, height: image.height, sourceSize: boxLimit, focus: focus)
        for step in Self.resizeSteps(for: placed, width: image.width, height: image.height, stop: stop) {
            try checkpoint()
            image = try image.applying(step)
        }
        if let factor = parameters.proportion, factor > 0, factor <= 1,
           Double(image.width) * factor >= 1, Double(image.height) * factor >= 1 {
            try checkpoint()
            var scale = ResizeTransformer(width: Int(Double(image.width) * factor), height: Int(Double(image.height) * factor), mode: .exact)
            scale.resamplesOnTwoThreads = false
            scale.stop = stop
            image = try image.applying(scale)
        }
        if parameters.extendsToBox {
            let width = max(image.width, parameters.width ?? 0), height = max(image.height, parameters.height ?? 0)
            if width != image.width || height != image.height {
                try checkpoint()
                image = try image.applying(ImageTransformers.Pad(width: width, height: height,
                                                                 color: parameters.flattensAlways ? parameters.background : .clear,
                                                                 gravity: placed.gravity))
            }
        }
        if let sigma = parameters.blur {
            try checkpoint()
            image = try image.applying(ImageTransformers.Blur(radius: sigma))
        }
        if let sigma = parameters.sharpen {
            try checkpoint()
            image = try image.applying(ImageTransformers.Sharpen(sigma: sigma))
        }
        if var sharpen = parameters.waveletSharpen {
            try checkpoint()
            sharpen.stop = stop
            image = try image.applying(sharpen)
        }
        if let size = parameters.pixelate, size > 1 {
            try checkpoint()
            image = try image.applying(ImageTransformers.Pixelate(blockSize: size))
        }
        if parameters.grayscale {
            try checkpoint()
            image = try image.applying(ImageTransformers.Grayscale(coefficients: .rec601))
        }
        if !parameters.colorAdjustments.isEmpty {
            try checkpoint()
            image = try image.applying(ImageTransformers.ColorAdjust(parameters.colorAdjustments))
        }
        if let radius = parameters.cornerRadius {
            try checkpoint()
            image = try image.applying(ImageTransformers.RoundCorner(radius: Double(radius), outsideColor: parameters.cornerColor))
        }
        if let padding = parameters.padding, padding.count == 4, padding.contains(where: { $0 > 0 }) {
            try checkpoint()
            image = try image.applying(Self.padding(padding, width: image.width, height: image.height,
                                                    color: parameters.flattensAlways ? parameters.background : .clear))
        }
        if let options = parameters.watermark {
            try checkpoint()
            guard let watermark = settings.watermark else {
                throw ServiceError.badParameter("'wm' needs a watermark: this service has no --watermark")
            }
            image = try image.applying(ImageTransformers.Watermark(mark: watermark.mark, markName: watermark.name, opacity: options.opacity,
                                                                   gravity: options.gravity, widthFraction: options.scale))
        }
        return image
    }

    /// The resize of `parameters` as transformers: a resize (smart, for `gravity=smart` with
    /// `cover`), then for `pad` the pad to the box. None for the original size.
    static func resizeSteps(for parameters: ImageParameters, width: Int, height: Int,
                            stop: StopFlag = StopFlag()) -> [any ImageTransformer] {
        if parameters.fit == .cover, parameters.smartGravity, let w = parameters.width, let h = parameters.height {
            return [ImageTransformers.SmartCrop(width: w, height: h, allowUpscaling: parameters.enlarge)]
        }
        var steps: [any ImageTransformer] = []
        if var resize = resize(for: parameters, width: width, height: height) {
            // The service renders one request per core already.
            resize.resamplesOnTwoThreads = false
            resize.stop = stop
            steps.append(resize)
        }
        if parameters.fit == .pad, let w = parameters.width, let h = parameters.height {
            steps.append(ImageTransformers.Pad(width: w, height: h, color: parameters.background, gravity: parameters.gravity))
        }
        return steps
    }

    /// The strong ETag: a hash of the source's validators, the options, the output format and
    /// the service's settings the render used (``RenderSettings/keySuffix(for:)``).
    static func etag(sourceValidators: String, parameters: ImageParameters, format: ImageFormat, settings: String = "") -> String {
        let digest = SHA256.hex(of: Array("\(sourceValidators)\n\(parameters.url.absoluteString)\n\(parameters.renderKey)\n\(format.rawValue)\(settings)".utf8))
        return "\"" + digest.prefix(32) + "\""
    }

    /// The longer side to decode to, `nil` for the full size.
    ///
    /// With the source's declared size: the least the resize needs, whichever way the EXIF
    /// orientation turns the picture (the box applies to the turned picture, the size is the
    /// stored one). A JPEG's is rounded up to a DCT-scaled size (1/8, 1/4, 1/2), so the decoder
    /// resamples nothing and the one resample is the resize's: a 4000×3000 source for a 300×300
    /// cover decodes at 500×375 from its DC coefficients alone, where the box's side alone
    /// (600) would cost a 1/4-scale decode and a resample to 600×450 before the resize's.
    /// Without a declared size: enough for the box unless the aspect ratio is extreme (then
    /// ``isLargeEnough(_:for:)`` sends it back for a full decode).
    static func decodeSide(_ parameters: ImageParameters, sourceSize: (width: Int, height: Int)?, isJPEG: Bool) -> Int? {
        guard let sourceSize else { return decodeSide(parameters) }
        let (width, height) = sourceSize
        let needed = max(scaleNeeded(parameters, width: width, height: height),
                         scaleNeeded(parameters, width: height, height: width))
        // Upscaling, or no box: nothing to gain from a smaller decode.
        guard needed < 1 else { return nil }
        let longer = max(width, height)
        // One pixel over, so the rounding of the decoder's size never leaves the resize short.
        guard isJPEG else { return min(longer, Int((Double(longer) * needed - 1e-9).rounded(.up)) + 1) }
        let target = (width: Int((Double(width) * needed).rounded(.up)), height: Int((Double(height) * needed).rounded(.up)))
        guard JPEGCoder.dctDenominator(width: width, height: height, atLeast: target) > 1 else { return nil }
        let scaled = JPEGCoder.dctScaledSize(width: width, height: height, atLeast: target)
        return max(scaled.width, scaled.height)
    }

    /// The factor a `width` × `height` picture is scaled by for the box (over 1 when it would be
    /// enlarged; 1 when there is no box).
    private static func scaleNeeded(_ parameters: ImageParameters, width: Int, height: Int) -> Double {
        let w = Double(width), h = Double(height)
        switch (parameters.width, parameters.height) {
        case (nil, nil): return 1
        case (let side?, nil): return Double(side) / w
        case (nil, let side?): return Double(side) / h
        case (let boxWidth?, let boxHeight?):
            let across = Double(boxWidth) / w, down = Double(boxHeight) / h
            return parameters.fit == .contain || parameters.fit == .pad ? min(across, down) : max(across, down)
        }
    }

    /// The longer side to decode to when the source's size is not known: enough for the box
    /// unless the source's aspect ratio is extreme.
    static func decodeSide(_ parameters: ImageParameters) -> Int? {
        switch (parameters.width, parameters.height) {
        case (nil, nil): return nil
        case (let w?, let h?): return parameters.fit == .contain || parameters.fit == .pad ? max(w, h) : 2 * max(w, h)
        case (let side?, nil), (nil, let side?): return 2 * side
        }
    }

    /// Whether a thumbnail-decoded `image` holds enough pixels for the resize asked for.
    static func isLargeEnough(_ image: DecodedImage, for parameters: ImageParameters) -> Bool {
        let width = Double(image.width), height = Double(image.height)
        switch (parameters.width, parameters.height) {
        case (nil, nil): return true
        case (let w?, nil): return width >= Double(w)
        case (nil, let h?): return height >= Double(h)
        case (let w?, let h?):
            switch parameters.fit {
            case .contain, .pad: return Double(w) / width <= 1 || Double(h) / height <= 1
            case .cover: return max(Double(w) / width, Double(h) / height) <= 1
            case .fill: return width >= Double(w) && height >= Double(h)
            }
        }
    }

    /// The resize for the box, `nil` for the original size. One side given: that side, the
    /// other from the aspect ratio (whatever `fit` says).
    static func resize(for parameters: ImageParameters, width: Int, height: Int) -> ResizeTransformer? {
        let unbounded = 1 << 30
        switch (parameters.width, parameters.height) {
        case (nil, nil):
            return nil
        case (let w?, nil):
            return ResizeTransformer(width: w, height: unbounded, mode: .fit, allowUpscaling: parameters.enlarge)
        case (nil, let h?):
            return ResizeTransformer(width: unbounded, height: h, mode: .fit, allowUpscaling: parameters.enlarge)
        case (let w?, let h?) where parameters.fit == .cover && parameters.coversWithoutCrop:
            // thumbor's full-fit-in: the side that scales least fills its side of the box, the
            // other is rounded as thumbor rounds it.
            let (sw, sh, tw, th) = (Double(width), Double(height), Double(w), Double(h))
            let size = sw / tw <= sh / th ? (w, max(1, Int((sh * tw / sw + 1e-5).rounded())))
                : (max(1, Int((sw * th / sh + 1e-5).rounded())), h)
            return ResizeTransformer(width: size.0, height: size.1, mode: .exact, allowUpscaling: parameters.enlarge)
        case (let w?, let h?):
            let mode: ResizeTransformer.Mode = switch parameters.fit {
            case .contain, .pad: .fit
            case .cover: .fill
            case .fill: .exact
            }
            return ResizeTransformer(width: w, height: h, mode: mode, allowUpscaling: parameters.enlarge, gravity: parameters.gravity)
        }
    }

    /// `parameters` with the options that need the image's size resolved against it (thumbor's,
    /// #45): the box within the oriented source (`boxWithinSource`, its sides turned with
    /// `rotate`), turned to the image's orientation (`adaptsOrientation`), the crop centred on
    /// `focus`.
    static func placed(_ parameters: ImageParameters, width: Int, height: Int,
                       sourceSize: (width: Int, height: Int), focus: (x: Double, y: Double)?) -> ImageParameters {
        var placed = parameters
        // imgproxy's `auto` compares the box asked for, before any clamp below.
        if parameters.fitsByOrientation, let w = parameters.width, let h = parameters.height {
            placed.fit = (width >= height) == (w >= h) ? .cover : .contain
        }
        if parameters.boxScaledWithinSource, let w = parameters.width, let h = parameters.height {
            let scale = min(1, Double(width) / Double(w), Double(height) / Double(h))
            if scale < 1 {
                placed.width = max(1, Int((Double(w) * scale).rounded()))
                placed.height = max(1, Int((Double(h) * scale).rounded()))
            }
        }
        if parameters.boxWithinSource {
            let turned = parameters.rotate == 90 || parameters.rotate == 270
            let source = turned ? (width: sourceSize.height, height: sourceSize.width) : sourceSize
            placed.width = parameters.width.map { min($0, source.width) }
            placed.height = parameters.height.map { min($0, source.height) }
        }
        if parameters.adaptsOrientation, let w = placed.width, let h = placed.height,
           (width < height && w > h) || (width > height && w < h) {
            (placed.width, placed.height) = (h, w)
        }
        if let focus {
            placed.gravity = .focus(x: focus.x, y: focus.y)
            placed.smartGravity = false
        }
        return placed
    }

    /// `point` (in the oriented source's pixels) as a fraction of the image after `crop`,
    /// `rotate` (clockwise) and the flips; `nil` when the crop leaves it out (thumbor then
    /// falls back on the alignment).
    static func focus(_ point: ImageParameters.PixelPoint, crop: ImageTransformers.Crop?, croppedWidth: Int, croppedHeight: Int,
                      rotate: Int, flipHorizontal: Bool, flipVertical: Bool) -> (x: Double, y: Double)? {
        guard croppedWidth > 0, croppedHeight > 0 else { return nil }
        var x = (point.x - Double(crop?.x ?? 0)) / Double(croppedWidth)
        var y = (point.y - Double(crop?.y ?? 0)) / Double(croppedHeight)
        guard (0...1).contains(x), (0...1).contains(y) else { return nil }
        switch rotate {
        case 90: (x, y) = (1 - y, x)
        case 180: (x, y) = (1 - x, 1 - y)
        case 270: (x, y) = (y, 1 - x)
        default: break
        }
        if flipHorizontal { x = 1 - x }
        if flipVertical { y = 1 - y }
        return (x, y)
    }
}
