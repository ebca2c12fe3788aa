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
}

/// The `format` parameter: a fixed output format, or `auto` (negotiated from `Accept`).
public enum RequestedFormat: String, Sendable, Hashable, CaseIterable {
    case auto, jpeg, png, webp, avif, gif
}

/// The parsed, validated query of `GET /image`.
public struct ImageParameters: Sendable, Hashable {
    /// The source image (http, https, `local:///PATH` under `--local-root`, or `s3://BUCKET/KEY`).
    public var url: URL
    /// The target width, if any.
    public var width: Int?
    /// The target height, if any.
    public var height: Int?
    /// How the source fits the box.
    public var fit: FitMode
    /// Whether a source smaller than the box is enlarged.
    public var enlarge: Bool
    /// The output format asked for.
    public var format: RequestedFormat
    /// Quality for lossy outputs, 1...100.
    public var quality: Int
    /// The signature sent, if any (hex).
    public var signature: String?

    /// The largest `w` or `h` accepted: beyond it the output alone would be hundreds of megabytes.
    public static let maxSide = 8192
    /// The quality used when `q` is absent.
    public static let defaultQuality = 80
    /// The longest `url` accepted.
    public static let maxURLLength = 4096
    /// The parameter names `GET /image` knows.
    public static let names: Set<String> = ["url", "w", "h", "fit", "enlarge", "format", "q", "preset", "sig"]
    /// The names a preset may set: the options that shape the output.
    public static let optionNames: Set<String> = ["w", "h", "fit", "enlarge", "format", "q"]
    /// The names a request may carry under `--presets-only`.
    public static let presetsOnlyNames: Set<String> = ["url", "preset", "format", "sig"]

    /// Parses a raw (percent-encoded) query string: the presets named by `preset` apply left to
    /// right, then the request's own parameters override them.
    /// - Parameters:
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
        self.url = url
        let options = try Options(values)
        width = options.width
        height = options.height
        fit = options.fit
        enlarge = options.enlarge
        format = options.format
        quality = options.quality
        signature = values["sig"]
    }

    /// The options that shape the output, parsed from their query values.
    struct Options {
        var width: Int?
        var height: Int?
        var fit = FitMode.contain
        var enlarge = false
        var format = RequestedFormat.auto
        var quality = ImageParameters.defaultQuality

        /// - Throws: ``ServiceError`` 400 naming the malformed option.
        init(_ values: [String: String]) throws {
            width = try ImageParameters.side(values["w"], name: "w")
            height = try ImageParameters.side(values["h"], name: "h")
            if let text = values["fit"] {
                guard let fit = FitMode(rawValue: text) else { throw ServiceError.badParameter("'fit' must be contain, cover or fill") }
                self.fit = fit
            }
            switch values["enlarge"] {
            case nil, "0", "false": enlarge = false
            case "1", "true": enlarge = true
            default: throw ServiceError.badParameter("'enlarge' must be 0 or 1")
            }
            if let text = values["format"] {
                guard let format = RequestedFormat(rawValue: text) else {
                    throw ServiceError.badParameter("'format' must be auto, jpeg, png, webp, avif or gif")
                }
                self.format = format
            }
            if let text = values["q"] {
                guard let quality = Int(text), (1...100).contains(quality) else { throw ServiceError.badParameter("'q' must be an integer in 1...100") }
                self.quality = quality
            }
        }
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
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let raw = parts.count > 1 ? String(parts[1]) : ""
            return (name, raw.removingPercentEncoding ?? raw)
        }
    }

    /// The part of the options that changes the output (not the signature): the output cache key
    /// and the ETag are made from it.
    var renderKey: String {
        "w=\(width.map(String.init) ?? "-"),h=\(height.map(String.init) ?? "-"),fit=\(fit.rawValue),enlarge=\(enlarge ? 1 : 0),q=\(quality)"
    }
}
