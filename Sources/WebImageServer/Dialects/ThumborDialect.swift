#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// thumbor's URL grammar (`--dialect thumbor`):
/// `/HASH|unsafe/[meta/][trim/][AxB:CxD/][fit-in/][-]Wx[-]H/[HALIGN/][VALIGN/][smart/][filters:.../]IMAGE`,
/// where HASH is the URL-safe base64 (padded) of the HMAC-SHA1 of the rest of the path under
/// `--thumbor-key`. The parts map onto ``ImageParameters`` so that the output has thumbor's
/// geometry; what cannot be honoured is a 400 naming it.
struct ThumborDialect: URLDialect {
    /// The longest path read: thumbor's URLs carry the source, which `/image` bounds as well.
    static let maxPathLength = 8192

    private let key: [UInt8]?
    private let allowsUnsafe: Bool

    /// The dialect as `configuration` sets it up: `--thumbor-key`, `--thumbor-allow-unsafe`.
    init(configuration: ServerConfiguration) throws {
        key = configuration.thumborKey.map { Array($0.utf8) }
        allowsUnsafe = configuration.thumborAllowUnsafe ?? (configuration.thumborKey == nil)
    }

    func request(path: Substring, query: String) throws -> DialectRequest {
        guard path.utf8.count <= Self.maxPathLength else {
            throw ServiceError.badParameter("the thumbor URL is longer than \(Self.maxPathLength) bytes")
        }
        guard let slash = path.firstIndex(of: "/"), !path[..<slash].isEmpty else {
            throw ServiceError.badParameter("the thumbor URL has neither a hash nor unsafe")
        }
        let first = path[..<slash]
        let signed = path[path.index(after: slash)...]
        if first == "unsafe" {
            guard allowsUnsafe else { throw ServiceError.badParameter("unsafe thumbor URLs are not allowed by this service") }
        } else {
            try verify(hash: first, of: signed)
        }
        let url = try ThumborURL(parsing: signed)
        if url.meta, url.trim != nil {
            // meta/ is read from the source's header; a trimmed size needs the decoded pixels.
            throw ServiceError.badParameter("thumbor's meta/ with trim is not supported by this service")
        }
        let filters = try ThumborFilters(parsing: url.filters)
        var parameters = ImageParameters(url: try Self.source(url.image), options: try Self.options(url, filters))
        parameters.signature = first == "unsafe" ? nil : String(first)
        return DialectRequest(parameters: parameters, answer: url.meta ? .thumborMeta(ThumborMeta(url: url, filters: filters), image: url.image) : .image)
    }

    /// thumbor answers every refusal of a request with 400: a bad hash, a source its rules
    /// refuse, an image it cannot read. A missing source stays 404, an origin's failure 502.
    func translate(_ error: ServiceError) -> ServiceError {
        switch (error.status, error.code) {
        case (403, _), (415, _): ServiceError(status: 400, code: error.code, message: error.message)
        default: error
        }
    }

    /// Compares the hash sent (percent-decoded, as thumbor unquotes it) with the one `signed`
    /// should carry, in constant time.
    /// - Throws: ``ServiceError`` 400, as thumbor answers a bad hash.
    private func verify(hash: Substring, of signed: Substring) throws {
        guard let key else { throw ServiceError.badParameter("signed thumbor URLs need --thumbor-key: this service has none") }
        let given = Hex.percentDecoded(hash) ?? Array(hash.utf8)
        let wanted = Array(Base64URL.encoded(HMACSHA1.authenticationCode(for: Array(signed.utf8), key: key), padded: true).utf8)
        guard RequestSignature.equalInConstantTime(given, wanted) else {
            throw ServiceError(status: 400, code: "badSignature", message: "malformed thumbor URL: the hash does not match")
        }
    }

    /// The source as thumbor's HTTP loader fetches it: percent-decoded once, `http://` put in
    /// front of what does not start with `http`.
    /// - Throws: ``ServiceError`` 400 for what is no http(s) URL with a host.
    static func source(_ image: Substring) throws -> URL {
        var text = Hex.percentDecodedString(image) ?? String(image)
        if !text.hasPrefix("http") { text = "http://" + text }
        guard text.utf8.count <= ImageParameters.maxURLLength else {
            throw ServiceError.badParameter("the thumbor image URL is longer than \(ImageParameters.maxURLLength) bytes")
        }
        guard let url = URL(string: text) ?? URL(string: Self.escaped(text)), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false else {
            throw ServiceError.badParameter("no original image was specified in the given URL")
        }
        return url
    }

    /// thumbor's geometry in ``ImageParameters/Options``.
    ///
    /// thumbor crops (or fits), flips, then runs the filters (`rotate` among them, counter-clockwise);
    /// the service crops, turns and flips, then fits. The two agree when the turn comes first with
    /// the box turned, the flips exchanged across a quarter turn, and the alignment turned and
    /// mirrored with the picture.
    static func options(_ url: ThumborURL, _ filters: ThumborFilters) throws -> ImageParameters.Options {
        if url.debug { throw ServiceError.badParameter("thumbor's debug/ is not supported by this service") }
        var options = ImageParameters.Options()
        if let trim = url.trim {
            options.trim = ImageTransformers.Trim(reference: trim.bottomRight ? .bottomRight : .topLeft, tolerance: Double(trim.tolerance))
        }
        func side(_ side: ThumborURL.Side, _ name: String) throws -> Int? {
            switch side {
            case .proportional: return nil
            case .original: throw ServiceError.badParameter("thumbor's 'orig' \(name) is not supported by this service")
            case .pixels(let value):
                guard value <= ImageParameters.maxSide else {
                    throw ServiceError.badParameter("thumbor \(name) \(value) is over \(ImageParameters.maxSide)")
                }
                return value
            }
        }
        var width = try side(url.width, "width"), height = try side(url.height, "height")
        if let crop = url.crop, crop.right > crop.left, crop.bottom > crop.top {
            options.crop = ImageTransformers.Crop(x: crop.left, y: crop.top, width: crop.right - crop.left, height: crop.bottom - crop.top)
            options.ignoresCropOutside = true
        }
        var flipHorizontal = url.flipHorizontal, flipVertical = url.flipVertical
        // Where the alignment puts the crop, as fractions of the image: 0, ½ or 1 each way.
        var align = (x: url.horizontalAlign == "left" ? 0.0 : url.horizontalAlign == "right" ? 1 : 0.5,
                     y: url.verticalAlign == "top" ? 0.0 : url.verticalAlign == "bottom" ? 1 : 0.5)
        // thumbor flips after its crop: the crop the service makes after its flip is mirrored.
        if flipHorizontal { align.x = 1 - align.x }
        if flipVertical { align.y = 1 - align.y }
        let clockwise = (360 - filters.rotate) % 360
        switch clockwise {
        case 90: align = (1 - align.y, align.x)
        case 180: align = (1 - align.x, 1 - align.y)
        case 270: align = (align.y, 1 - align.x)
        default: break
        }
        if clockwise == 90 || clockwise == 270 {
            (width, height) = (height, width)
            (flipHorizontal, flipVertical) = (flipVertical, flipHorizontal)
        }
        options.rotate = clockwise
        options.flipHorizontal = flipHorizontal
        options.flipVertical = flipVertical
        options.gravity = Self.gravity(x: align.x, y: align.y)
        options.width = width
        options.height = height
        if url.fitIn, width == nil, height == nil {
            // thumbor's box is then the image itself: nothing to fit.
        } else if url.fitIn {
            if url.full {
                // full-fit-in covers the box with the whole image, enlarging it if need be.
                options.fit = .cover
                options.coversWithoutCrop = true
                options.enlarge = !filters.noUpscale
            } else {
                options.fit = filters.fill != nil && width != nil && height != nil ? .pad : .contain
                options.enlarge = filters.upscale
            }
            options.adaptsOrientation = url.adaptive
        } else {
            // thumbor enlarges to the size asked for unless no_upscale() says otherwise.
            options.fit = filters.stretch ? .fill : .cover
            options.enlarge = true
            options.smartGravity = url.smart
        }
        if filters.noUpscale { options.boxWithinSource = true }
        if let fill = filters.fill { options.background = fill }
        if let background = filters.background {
            options.background = background
            options.flattensAlways = true
        }
        options.focalPoint = filters.focal
        options.quality = filters.quality
        options.format = filters.format ?? .auto
        // thumbor keeps the source's format (a PNG stays a PNG, opaque or not) unless it negotiates WebP.
        options.autoFallback = .auto
        options.blur = filters.blurSigma
        options.waveletSharpen = filters.sharpen
        options.grayscale = filters.grayscale
        options.colorAdjustments = filters.colorAdjustments
        options.proportion = filters.proportion
        if let mark = filters.watermark {
            // Loaded as thumbor's loader loads it: the same rules as the image's source.
            options.overlay = ImageParameters.Overlay(url: try source(Substring(mark.source)), x: mark.x, y: mark.y,
                                                      transparency: mark.transparency, widthPercent: mark.widthPercent,
                                                      heightPercent: mark.heightPercent)
        }
        options.cornerRadius = filters.cornerRadius
        options.cornerColor = filters.cornerColor
        options.maxBytes = filters.maxBytes
        return options
    }

    /// The named gravity at fractions `x`, `y` (each 0, ½ or 1).
    private static func gravity(x: Double, y: Double) -> ImageTransformers.Gravity {
        switch (x, y) {
        case (0, 0): .topLeft
        case (0.5, 0): .top
        case (1, 0): .topRight
        case (0, 0.5): .left
        case (1, 0.5): .right
        case (0, 1): .bottomLeft
        case (0.5, 1): .bottom
        case (1, 1): .bottomRight
        default: .center
        }
    }

    /// `text` with the bytes a URL cannot hold (spaces, controls, non-ASCII, `"<>\^`{|}`)
    /// percent-encoded, the URL's own punctuation kept: a source thumbor's part decodes to such
    /// characters is fetched as thumbor's loader re-quotes it.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7f, !"\"<>\\^`{|}".utf8.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += Hex.percentEncoded(byte)
            }
        }
        return result
    }
}
