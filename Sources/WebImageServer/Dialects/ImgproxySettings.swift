#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// imgproxy's settings under their own names (`IMGPROXY_KEY`, `IMGPROXY_TTL`, ...), read from the
/// environment when `--dialect imgproxy` is on, so a deployment moving from imgproxy keeps its
/// environment. Those with a twin among the service's settings set that one (a `WEBIMAGE_`
/// setting, flag or config key wins over its twin); the others are the dialect's own and live here.
public struct ImgproxySettings: Sendable, Equatable {
    /// `IMGPROXY_KEY`: the hex keys URLs are signed with, comma-separated for rotation (one per salt).
    public var keys: [String] = []
    /// `IMGPROXY_SALT`: the hex salts, one per key, in the same order.
    public var salts: [String] = []
    /// `IMGPROXY_SIGNATURE_SIZE`: how many bytes of the HMAC a signature carries (1...32).
    public var signatureSize: Int = 32
    /// `IMGPROXY_BASE_URL`: put in front of every source URL that does not start with it.
    public var baseURL: String?
    /// `IMGPROXY_PRESETS`: `NAME=OPTIONS` in imgproxy's own grammar (`thumb=rs:fill:100:100/q:70`).
    public var presets: [String] = []
    /// `IMGPROXY_ONLY_PRESETS`: the options part of a URL names presets only (`thumb:small`).
    public var onlyPresets = false
    /// `IMGPROXY_ENFORCE_WEBP`: WebP whenever `Accept` allows it, whatever the URL asks for.
    public var enforceWebP = false
    /// `IMGPROXY_ENFORCE_AVIF`: AVIF whenever `Accept` allows it, whatever the URL asks for.
    public var enforceAVIF = false
    /// The `IMGPROXY_` names found in the environment, in the order of ``names``.
    public var namesRead: [String] = []
    /// The `IMGPROXY_` names read but not used because the service's own twin was set.
    public var namesOverridden: [String] = []

    /// The defaults: no key, imgproxy's full-length signatures, no presets.
    public init() {}

    /// Every name read, in the order they are read.
    public static let names = [
        "IMGPROXY_KEY", "IMGPROXY_SALT", "IMGPROXY_SIGNATURE_SIZE", "IMGPROXY_ALLOWED_SOURCES", "IMGPROXY_MAX_SRC_RESOLUTION",
        "IMGPROXY_MAX_SRC_FILE_SIZE", "IMGPROXY_QUALITY", "IMGPROXY_FORMAT_QUALITY", "IMGPROXY_PRESETS", "IMGPROXY_ONLY_PRESETS",
        "IMGPROXY_WATERMARK_PATH", "IMGPROXY_BASE_URL", "IMGPROXY_TTL", "IMGPROXY_ENFORCE_WEBP", "IMGPROXY_ENFORCE_AVIF",
        "IMGPROXY_AUTO_ROTATE", "IMGPROXY_STRIP_METADATA",
    ]

    /// Reads the `IMGPROXY_` names of `environment` into `configuration`: each twin only when
    /// `isSet` says the service's own setting (by its config key) was not given.
    /// - Throws: ``ServiceError`` naming a value that cannot be read, or a setting this service
    ///   cannot honour (`IMGPROXY_AUTO_ROTATE=false`, `IMGPROXY_STRIP_METADATA=false`).
    static func apply(environment: [String: String], to configuration: inout ServerConfiguration,
                      isSet: (String) -> Bool) throws {
        var settings = ImgproxySettings()
        func value(_ name: String) -> String? {
            guard let text = environment[name]?.trimmingSpacesAndTabs, !text.isEmpty else { return nil }
            settings.namesRead.append(name)
            return text
        }
        /// The value of a twin of `key`, `nil` when the service's own setting was given.
        func twin(_ name: String, _ key: String) -> String? {
            guard let text = value(name) else { return nil }
            if isSet(key) {
                settings.namesOverridden.append(name)
                return nil
            }
            return text
        }
        func bad(_ name: String, _ text: String, _ expected: String) -> ServiceError {
            .badParameter("\(name)='\(text)': expected \(expected)")
        }
        func bool(_ name: String, _ text: String) throws -> Bool {
            // Go's strconv.ParseBool, as imgproxy reads its booleans.
            switch text {
            case "1", "t", "T", "true", "TRUE", "True": return true
            case "0", "f", "F", "false", "FALSE", "False": return false
            default: throw bad(name, text, "true or false")
            }
        }
        func list(_ text: String) -> [String] {
            text.split(separator: ",").map { $0.trimmingSpacesAndTabs }.filter { !$0.isEmpty }
        }
        if let text = value("IMGPROXY_KEY") { settings.keys = list(text) }
        if let text = value("IMGPROXY_SALT") { settings.salts = list(text) }
        if let text = value("IMGPROXY_SIGNATURE_SIZE") {
            guard let size = Int(text), (1...32).contains(size) else { throw bad("IMGPROXY_SIGNATURE_SIZE", text, "1...32") }
            settings.signatureSize = size
        }
        if let text = twin("IMGPROXY_ALLOWED_SOURCES", ServeSetting.allowedSource.configKey) { configuration.allowedSourcePrefixes = list(text) }
        if let text = twin("IMGPROXY_MAX_SRC_RESOLUTION", ServeSetting.maxSourcePixels.configKey) {
            guard let megapixels = Double(text), megapixels.isFinite, megapixels > 0, megapixels <= 1e6 else {
                throw bad("IMGPROXY_MAX_SRC_RESOLUTION", text, "megapixels, more than 0")
            }
            configuration.maxSourcePixels = max(1, Int(megapixels * 1_000_000))
        }
        if let text = twin("IMGPROXY_MAX_SRC_FILE_SIZE", ServeSetting.maxSourceBytes.configKey) {
            guard let bytes = Int64(text), bytes >= 0 else { throw bad("IMGPROXY_MAX_SRC_FILE_SIZE", text, "bytes, 0 or more") }
            // imgproxy's 0 is "no limit": the service keeps its own, as a source is held in memory.
            if bytes > 0 { configuration.maxSourceBytes = bytes }
        }
        let quality = twin("IMGPROXY_QUALITY", ServeSetting.quality.configKey)
        let formatQuality = twin("IMGPROXY_FORMAT_QUALITY", ServeSetting.quality.configKey)
        if let quality {
            guard let value = Int(quality), (1...100).contains(value) else { throw bad("IMGPROXY_QUALITY", quality, "1...100") }
            for format in ServerConfiguration.defaultQualities.keys { configuration.qualities[format] = value }
        }
        if let formatQuality {
            // The service's own `FORMAT=Q` list, one entry at a time, over IMGPROXY_QUALITY.
            for entry in list(formatQuality) {
                let name = entry.split(separator: "=").first.map { $0.lowercased() } ?? ""
                let parsed = try ServerConfiguration.qualities(entry)
                guard let format = ImageFormat(rawValue: name == "jpg" ? "jpeg" : name) else { continue }
                configuration.qualities[format] = parsed[format]
            }
        }
        if let text = value("IMGPROXY_PRESETS") {
            settings.presets = text.split(separator: ",").map { String($0) }
        }
        if let text = value("IMGPROXY_ONLY_PRESETS") { settings.onlyPresets = try bool("IMGPROXY_ONLY_PRESETS", text) }
        if let text = twin("IMGPROXY_WATERMARK_PATH", ServeSetting.watermark.configKey) { configuration.watermarkFile = text }
        if let text = value("IMGPROXY_BASE_URL") { settings.baseURL = text }
        if let text = twin("IMGPROXY_TTL", ServeSetting.cacheControlMaxAge.configKey) {
            guard let seconds = Int(text), seconds >= 0 else { throw bad("IMGPROXY_TTL", text, "seconds, 0 or more") }
            configuration.cacheControlMaxAge = seconds
        }
        if let text = value("IMGPROXY_ENFORCE_WEBP") { settings.enforceWebP = try bool("IMGPROXY_ENFORCE_WEBP", text) }
        if let text = value("IMGPROXY_ENFORCE_AVIF") { settings.enforceAVIF = try bool("IMGPROXY_ENFORCE_AVIF", text) }
        // Outputs are always oriented and never carry metadata: only imgproxy's defaults can be honoured.
        if let text = value("IMGPROXY_AUTO_ROTATE"), try !bool("IMGPROXY_AUTO_ROTATE", text) {
            throw ServiceError.badParameter("IMGPROXY_AUTO_ROTATE=false is not supported: this service always applies the EXIF orientation")
        }
        if let text = value("IMGPROXY_STRIP_METADATA"), try !bool("IMGPROXY_STRIP_METADATA", text) {
            throw ServiceError.badParameter("IMGPROXY_STRIP_METADATA=false is not supported: this service's outputs never carry metadata")
        }
        configuration.imgproxy = settings
    }

    /// The start-up lines: the keys (not shown), which `IMGPROXY_` names were read, and which
    /// lost to the service's own.
    var summary: String {
        let keysLine = "imgproxy-key: " + (keys.isEmpty ? "(none: any signature accepted)"
            : "(\(keys.count) set, signature size \(signatureSize))")
        return keysLine + "\n" + namesLine
    }

    private var namesLine: String {
        guard !namesRead.isEmpty else { return "imgproxy-settings: (no IMGPROXY_ names set)" }
        let used = namesRead.filter { !namesOverridden.contains($0) }
        var line = "imgproxy-settings: read \(used.isEmpty ? "(none used)" : used.joined(separator: ", "))"
        if !namesOverridden.isEmpty {
            line += "; not used, the service's own setting given: \(namesOverridden.joined(separator: ", "))"
        }
        return line
    }
}
