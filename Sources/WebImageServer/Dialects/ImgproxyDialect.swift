#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// imgproxy's URL grammar (`--dialect imgproxy`): `/SIGNATURE/OPTIONS/plain/URL[@EXT]` and
/// `/SIGNATURE/OPTIONS/BASE64URL[.EXT]`, where SIGNATURE is the URL-safe base64 (unpadded) of the
/// HMAC-SHA256 of a salt and the rest of the path under a key (`IMGPROXY_KEY`, `IMGPROXY_SALT`,
/// several pairs while keys are rotated), cut to `IMGPROXY_SIGNATURE_SIZE` bytes. Without a key
/// any signature is accepted (`insecure`, `_`), as imgproxy does. The options are read by
/// ``ImgproxyOptions`` and mapped onto ``ImageParameters`` by ``ImgproxyGeometry``.
///
/// Statuses are imgproxy's: a wrong signature 403, a malformed URL or option 404, a source off
/// `IMGPROXY_ALLOWED_SOURCES` 404, a source it cannot read 422 (``translate(_:)``).
struct ImgproxyDialect: URLDialect {
    /// One key and its salt.
    private struct SigningPair: Sendable {
        var key: [UInt8]
        var salt: [UInt8]
    }

    private let pairs: [SigningPair]
    private let signatureSize: Int
    private let settings: ImgproxySettings
    private let presets: ImgproxyOptions.Presets

    /// The dialect as `configuration` sets it up (``ServerConfiguration/imgproxy``).
    /// - Throws: ``ServiceError`` for keys or salts that are not hex or not as many, a signature
    ///   size outside 1...32, a malformed preset.
    init(configuration: ServerConfiguration) throws {
        settings = configuration.imgproxy
        guard settings.keys.count == settings.salts.count else {
            throw ServiceError.badParameter("IMGPROXY_KEY names \(settings.keys.count) keys and IMGPROXY_SALT \(settings.salts.count) salts: one salt per key")
        }
        pairs = try zip(settings.keys, settings.salts).map { key, salt in
            guard let keyBytes = Hex.bytes(key), !keyBytes.isEmpty, let saltBytes = Hex.bytes(salt) else {
                throw ServiceError.badParameter("IMGPROXY_KEY and IMGPROXY_SALT are hex-encoded")
            }
            return SigningPair(key: keyBytes, salt: saltBytes)
        }
        guard (1...32).contains(settings.signatureSize) else { throw ServiceError.badParameter("IMGPROXY_SIGNATURE_SIZE must be in 1...32") }
        signatureSize = settings.signatureSize
        presets = try ImgproxyOptions.Presets(settings.presets)
    }

    func request(path: Substring, query: String) throws -> DialectRequest {
        guard path.utf8.count <= ImgproxyOptions.maxPathLength else {
            throw ImgproxyOptions.invalid("the path is longer than \(ImgproxyOptions.maxPathLength) bytes")
        }
        guard let slash = path.firstIndex(of: "/"), !path[..<slash].isEmpty, path.index(after: slash) < path.endIndex else {
            throw ImgproxyOptions.invalid("invalid path: \(path.prefix(64))")
        }
        let signature = path[..<slash]
        let rest = Self.redenormalized(path[path.index(after: slash)...])
        try verify(signature: signature, of: rest)
        let options = try ImgproxyOptions(parsing: Substring(rest), presets: presets, onlyPresets: settings.onlyPresets,
                                          baseURL: settings.baseURL)
        var parameters = ImageParameters(url: try Self.source(options.source),
                                         options: try ImgproxyGeometry.options(options, settings: settings))
        parameters.signature = pairs.isEmpty ? nil : String(signature)
        return DialectRequest(parameters: parameters, extraHeaders: ImgproxyGeometry.headers(options, format: parameters.format))
    }

    /// imgproxy's statuses for what goes wrong after the parse: a source its rules refuse is
    /// 404 ("Source URL is not allowed"), one it cannot read or that is over a limit 422.
    func translate(_ error: ServiceError) -> ServiceError {
        switch (error.status, error.code) {
        case (403, "sourceNotAllowed"): ServiceError(status: 404, code: error.code, message: "Source URL is not allowed: \(error.message)")
        case (413, "sourceTooLarge"), (415, _): ServiceError(status: 422, code: error.code, message: error.message)
        default: error
        }
    }

    /// Checks `signature` against every key and salt over `/` + `signed`, in constant time.
    /// Without a key anything is accepted but what looks like an option (imgproxy's 403 for a
    /// URL whose signature part was left out).
    /// - Throws: ``ServiceError`` 403.
    private func verify(signature: Substring, of signed: String) throws {
        guard !pairs.isEmpty else {
            if signature.contains(":") {
                throw ServiceError.badSignature("the signature appears to be a processing option: the signature part is always in the URL")
            }
            return
        }
        // imgproxy reads the signature as unpadded base64; `=` is no part of it.
        guard !signature.contains("="), signature.utf8.count <= 64, let given = Base64URL.decoded(signature) else {
            throw ServiceError.badSignature("invalid signature encoding")
        }
        let message = Array(("/" + signed).utf8)
        var matched = false
        for pair in pairs {
            let code = HMACSHA256.authenticationCode(for: pair.salt + message, key: pair.key).prefix(signatureSize)
            // Every pair is tried, so the time does not tell which one matched.
            if RequestSignature.equalInConstantTime(Array(given), Array(code)) { matched = true }
        }
        guard matched else { throw ServiceError.badSignature("invalid signature") }
    }

    /// `path` as imgproxy restores it before checking it (`RedenormalizePath`): `%3A` in the
    /// options read as `:` (some proxies encode it), and a plain source's `scheme:/` that a
    /// proxy merged back to `scheme://`.
    static func redenormalized(_ path: Substring) -> String {
        let options: Substring, plain: Substring?
        if path.hasPrefix("plain/") {
            (options, plain) = ("", path.dropFirst(6))
        } else if let range = path.range(of: "/plain/") {
            (options, plain) = (path[..<range.lowerBound], path[range.upperBound...])
        } else {
            (options, plain) = (path, nil)
        }
        let restored = options.replacingOccurrences(of: "%3A", with: ":")
        guard var url = plain.map(String.init) else { return restored }
        // `^(\S+):/([^/])`: the last `:/` not followed by `/` in the leading run without spaces.
        let run = url.prefix { !$0.isWhitespace }
        if let colon = Self.lastSingleSlashColon(in: run) {
            let scheme = url[..<colon]
            let slash = url.index(after: colon)
            url.replaceSubrange(colon...slash, with: scheme == "local" ? ":///" : "://")
        }
        return restored.isEmpty ? "plain/" + url : restored + "/plain/" + url
    }

    /// The index of the last `:` in `run` (not its first character) followed by `/` and then a character other than `/`.
    private static func lastSingleSlashColon(in run: Substring) -> Substring.Index? {
        let characters = Array(run.indices)
        guard characters.count >= 4 else { return nil }
        for position in stride(from: characters.count - 3, through: 1, by: -1)
        where run[characters[position]] == ":" && run[characters[position + 1]] == "/" && run[characters[position + 2]] != "/" {
            return characters[position]
        }
        return nil
    }

    /// The source URL: http(s) with a host, `local:///PATH`, `s3://BUCKET/KEY`.
    /// - Throws: ``ServiceError`` 404, as imgproxy answers a source it cannot fetch.
    static func source(_ text: String) throws -> URL {
        guard text.utf8.count <= ImageParameters.maxURLLength else {
            throw ImgproxyOptions.invalid("the image URL is longer than \(ImageParameters.maxURLLength) bytes")
        }
        // A plain source is percent-decoded first: what a URL cannot hold is encoded again, as imgproxy's fetcher does.
        guard let url = URL(string: text) ?? URL(string: ThumborDialect.escaped(text)), let scheme = url.scheme?.lowercased() else {
            throw ServiceError(status: 404, code: "invalidSource", message: "Invalid source URL: \(text.prefix(64))")
        }
        switch scheme {
        case "http", "https", "s3":
            guard url.host?.isEmpty == false else { throw ServiceError(status: 404, code: "invalidSource", message: "Invalid source URL: no host") }
        case "local":
            break
        default:
            throw ServiceError(status: 404, code: "invalidSource", message: "Unknown scheme: \(scheme.prefix(16))")
        }
        return url
    }
}
