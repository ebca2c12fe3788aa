#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// One setting of `webimage serve`, declared once: its flag, the environment variable and the
/// config-file key ``ServerConfiguration/resolve(_:environment:memory:)`` reads it under, the help
/// line `webimage serve --help` prints, and the default that help shows.
///
/// ``all`` is the whole list. The loader takes its names from it, the command its flag names and
/// help; tests check the command's flags, and the settings tables of the README and of
/// *Running the service*, against it, so a setting added here and not there fails them.
public struct ServeSetting: Sendable, Hashable, Identifiable {
    /// How the setting is written on the command line.
    public enum Syntax: Sendable, Hashable {
        /// `--NAME VALUE`.
        case option
        /// `--NAME VALUE`, repeatable: every value is kept.
        case repeatableOption
        /// `--NAME` alone: it can only turn the setting on, so its absence leaves the setting to
        /// the environment and the file.
        case flag
        /// `--NAME` or `--no-NAME`.
        case invertibleFlag
    }

    /// The flag's name without its dashes (`cache-dir`).
    public let name: String
    /// How the flag is written.
    public let syntax: Syntax
    /// What the value stands for in the help and the documentation (`DIR`); `nil` for a flag.
    public let valueName: String?
    /// The help line, without the default.
    public let abstract: String
    /// The default as the help shows it (`8080`, `memory only`); `nil`: none shown.
    public let defaultDescription: String?
    /// The JSON config file's key: the flag's name, except `presets` (an object of name → query,
    /// where `--preset` is one `NAME=QUERY`).
    public let configKey: String
    /// The name it had before (`allow-source`), still read under each source (flag, `WEBIMAGE_`
    /// variable, config key) with a deprecation line at start.
    public let formerName: String?
    /// Variables of other programs read when the service's own is not set (`THUMBOR_SECURITY_KEY`).
    public let fallbackVariables: [String]
    /// Whether the value is a secret, never printed.
    public let isSecret: Bool

    /// A setting; the config key is its name unless `configKey` says otherwise.
    public init(_ name: String, _ syntax: Syntax, valueName: String? = nil, default defaultDescription: String? = nil,
                configKey: String? = nil, formerName: String? = nil, fallbackVariables: [String] = [], isSecret: Bool = false,
                _ abstract: String) {
        self.name = name
        self.syntax = syntax
        self.valueName = valueName
        self.abstract = abstract
        self.defaultDescription = defaultDescription
        self.configKey = configKey ?? name
        self.formerName = formerName
        self.fallbackVariables = fallbackVariables
        self.isSecret = isSecret
    }

    /// The name: no two settings share one.
    public var id: String { name }

    /// `--NAME`.
    public var flag: String { "--" + name }

    /// Every spelling on the command line: `--NAME`, and `--no-NAME` for an invertible flag (not
    /// the former name).
    public var flags: [String] { syntax == .invertibleFlag ? [flag, "--no-" + name] : [flag] }

    /// The environment variable: `WEBIMAGE_` and the name in capitals, `-` as `_`, as
    /// swift-configuration's environment provider spells the key `webimage.NAME`.
    public var environmentVariable: String { Self.environmentVariable(name) }

    /// The former name's environment variable (`WEBIMAGE_ALLOW_SOURCE`).
    public var formerEnvironmentVariable: String? { formerName.map(Self.environmentVariable) }

    /// The help line `webimage serve --help` prints: the abstract and the default.
    public var help: String { defaultDescription.map { "\(abstract) (default: \($0))." } ?? "\(abstract)." }

    private static func environmentVariable(_ name: String) -> String {
        "WEBIMAGE_" + name.uppercased().replacing("-", with: "_")
    }

    /// A setting with its default value, from which its ``ServeSetting/defaultDescription`` is
    /// written, so the value ``ServerConfiguration`` starts from and the help agree.
    @dynamicMemberLookup
    public struct WithDefault<Value: Sendable>: Sendable {
        /// The names and the help.
        public let setting: ServeSetting
        /// The value when no flag, variable or key gives one.
        public let defaultValue: Value

        init(_ name: String, _ syntax: Syntax, valueName: String? = nil, default defaultValue: Value,
             shown: (Value) -> String = { "\($0)" }, formerName: String? = nil, fallbackVariables: [String] = [], _ abstract: String) {
            self.defaultValue = defaultValue
            setting = ServeSetting(name, syntax, valueName: valueName, default: shown(defaultValue), formerName: formerName,
                                   fallbackVariables: fallbackVariables, abstract)
        }

        /// The setting's names and help.
        public subscript<Property>(dynamicMember path: KeyPath<ServeSetting, Property>) -> Property { setting[keyPath: path] }
    }
}

extension ServeSetting {
    /// The address to listen on.
    public static let host = WithDefault("host", .option, valueName: "HOST", default: "127.0.0.1", "Address to listen on")
    /// The port to listen on.
    public static let port = WithDefault("port", .option, valueName: "PORT", default: 8080, "Port to listen on; 0 picks a free one")
    /// The disk cache's directory.
    public static let cacheDir = ServeSetting("cache-dir", .option, valueName: "DIR", default: "memory only",
                                              "Directory for the disk cache of rendered outputs, and of sources from their second use")
    /// The URL prefixes sources must be under.
    public static let allowedSource = ServeSetting("allowed-source", .repeatableOption, valueName: "PREFIX", default: "any public URL",
                                                   "Fetch only sources under PREFIX (https://*.cdn.example.com/); repeatable")
    /// The hosts exempt from the private-address guard.
    public static let allowPrivateSource = ServeSetting("allow-private-source", .repeatableOption, valueName: "HOST[:PORT]",
                                                        formerName: "allow-source",
                                                        "Exempt HOST (on PORT) from the private-address guard; repeatable")
    /// The private-address guard lifted for every host.
    public static let allowPrivateSources = WithDefault("allow-private-sources", .flag, default: false, shown: { _ in "off" },
                                                        "Allow sources on loopback, private and link-local addresses")
    /// The keys requests are signed with.
    public static let signingKey = ServeSetting("signing-key", .repeatableOption, valueName: "KEY", default: "unsigned requests accepted",
                                                isSecret: true,
                                                "Require sig=hex HMAC-SHA256(KEY, \"/image?\" or \"/info?\" + query without sig); "
                                                    + "repeatable: any key verifies")
    /// A file of signing keys.
    public static let signingKeyFile = ServeSetting("signing-key-file", .option, valueName: "FILE",
                                                    "Signing keys one a line (# comments, blank lines ignored), kept out of the arguments")
    /// Signatures over the query alone still accepted.
    public static let signatureMigration = WithDefault("signature-migration", .invertibleFlag, default: true,
                                                       shown: { $0 ? "on, off from the next release" : "off" },
                                                       "Also accept signatures over the query alone, for every endpoint (migration)")
    /// Named parameter sets.
    public static let preset = ServeSetting("preset", .repeatableOption, valueName: "NAME=QUERY", configKey: "presets",
                                            "A named set of parameters requests apply with preset=NAME[,NAME...]; repeatable")
    /// Requests limited to presets.
    public static let presetsOnly = WithDefault("presets-only", .flag, default: false, shown: { _ in "off" },
                                                "Accept only url, preset, format and sig in requests")
    /// The directory of `local:` sources.
    public static let localRoot = ServeSetting("local-root", .option, valueName: "DIR", default: "refused",
                                               "Serve local:///PATH sources from inside this directory")
    /// The S3-compatible store.
    public static let s3Endpoint = ServeSetting("s3-endpoint", .option, valueName: "URL", default: "AWS's regional endpoint",
                                                "S3-compatible store for s3://BUCKET/KEY sources, path-style")
    /// The region S3 requests are signed for.
    public static let s3Region = WithDefault("s3-region", .option, valueName: "REGION", default: "us-east-1",
                                             shown: { "AWS_REGION, else \($0)" }, fallbackVariables: ["AWS_REGION"],
                                             "Region S3 reads are signed for")
    /// The fleet's shared store of rendered outputs.
    public static let resultStore = ServeSetting("result-store", .option, valueName: "s3://BUCKET/PREFIX", default: "none",
                                                 "Share rendered outputs with a fleet: look them up in, and write them to, this S3 location")
    /// The largest source body.
    public static let maxSourceBytes = WithDefault("max-source-bytes", .option, valueName: "N", default: Int64(50 * 1024 * 1024),
                                                   "Largest source body accepted, bytes; larger: 413")
    /// The most pixels of a source.
    public static let maxSourcePixels = WithDefault("max-source-pixels", .option, valueName: "N", default: 100_000_000,
                                                    "Most pixels a source may have, an animation's rendered frames counted; more: 413")
    /// The most frames of an animation rendered. 500 frames: 50 s at 10 frames a second, more
    /// than an animation made to be shown in a page holds, so `format=gif` and animated WebP keep
    /// such animations whole (imgproxy's default of 1 would make every output a still). Memory is
    /// bounded by the frames × pixels limits and the budget, not by this count; it bounds the
    /// per-frame work they do not see (a 1×1 frame costs a quantisation, a graphics control block
    /// and a pad or resize like any other).
    public static let maxAnimationFrames = WithDefault("max-animation-frames", .option, valueName: "N", default: 500,
                                                       "Most frames of an animation rendered; more are cut to the first N")
    /// The most pixels of an output.
    public static let maxResultPixels = WithDefault("max-result-pixels", .option, valueName: "N", default: 100_000_000,
                                                    "Most pixels an output may have, every frame counted; more: 422")
    /// The renders admitted at once.
    public static let concurrency = WithDefault("concurrency", .option, valueName: "N", default: 64,
                                                "Image renders admitted at once, running or queued; more: 503 with Retry-After")
    /// `Cache-Control`'s `max-age`.
    public static let cacheControlMaxAge = WithDefault("cache-control-max-age", .option, valueName: "S", default: 86_400,
                                                       "max-age of Cache-Control on images, seconds")
    /// The longest a render may take.
    public static let renderTimeout = WithDefault("render-timeout", .option, valueName: "S", default: Duration.seconds(30),
                                                  shown: seconds, "A render past this many seconds answers 503 renderTimedOut")
    /// The longest a connection may wait for a request head.
    public static let clientTimeout = WithDefault("client-timeout", .option, valueName: "S", default: Duration.seconds(10), shown: seconds,
                                                  "Close a connection that has not sent a complete request head this many seconds "
                                                      + "after it opened or after its last response")
    /// The time served after SIGTERM.
    public static let shutdownDelay = WithDefault("shutdown-delay", .option, valueName: "S", default: Duration.zero, shown: seconds,
                                                  "After SIGTERM, answer /readyz with 503 and keep serving this many seconds before stopping")
    /// The memory budget, in MiB.
    public static let memoryBudgetMiB = WithDefault("memory-budget-mib", .option, valueName: "N", default: 1024,
                                                    shown: { "\($0), or 3/4 of the cgroup memory limit when less" },
                                                    "Memory above the baseline for the memory cache and the renders in flight, MiB; "
                                                        + "renders wait for room")
    /// The quality of each lossy format.
    public static let quality = WithDefault("quality", .repeatableOption, valueName: "FORMAT=Q,...",
                                            default: [ImageFormat.jpeg: 80, .webp: 80, .avif: 60, .jxl: 80],
                                            shown: { qualities in
                                                [ImageFormat.jpeg, .webp, .avif, .jxl].compactMap { format in
                                                    qualities[format].map { "\(format.rawValue)=\($0)" }
                                                }.joined(separator: ",")
                                            },
                                            "Quality per output format when a request has no q; repeatable")
    /// The formats `format=auto` tries.
    public static let autoFormats = WithDefault("auto-formats", .option, valueName: "LIST", default: FormatNegotiation.defaultAutoFormats,
                                                shown: { $0.map(\.rawValue).joined(separator: ",") },
                                                "Formats format=auto tries, in order, among those Accept names (avif, webp, jxl)")
    /// The watermark image.
    public static let watermark = ServeSetting("watermark", .option, valueName: "FILE", default: "wm refused",
                                               "Image the wm parameter composites over outputs")
    /// Other image services' URL grammars.
    public static let dialect = ServeSetting("dialect", .repeatableOption, valueName: "NAME[=PREFIX]",
                                             "Also serve another image service's URLs: imgproxy[=PREFIX] or thumbor[=PREFIX] "
                                                 + "(default prefix /), repeatable")
    /// thumbor's `SECURITY_KEY`.
    public static let thumborKey = ServeSetting("thumbor-key", .option, valueName: "KEY", fallbackVariables: ["THUMBOR_SECURITY_KEY"],
                                                isSecret: true,
                                                "thumbor's SECURITY_KEY: --dialect thumbor checks URL hashes with it "
                                                    + "(also THUMBOR_SECURITY_KEY)")
    /// thumbor's `unsafe/` URLs served.
    public static let thumborAllowUnsafe = ServeSetting("thumbor-allow-unsafe", .invertibleFlag, default: "only when no --thumbor-key is set",
                                                        "Serve thumbor's unsafe/ URLs")
    /// The OTLP/HTTP collector spans are exported to.
    public static let otelEndpoint = ServeSetting("otel-endpoint", .option, valueName: "URL",
                                                  default: "OTEL_EXPORTER_OTLP_ENDPOINT, else none",
                                                  fallbackVariables: ["OTEL_EXPORTER_OTLP_ENDPOINT"],
                                                  "Export spans over OTLP/HTTP to this collector (traces to /v1/traces)")

    /// Every setting, in the order the help lists them.
    public static let all: [ServeSetting] = [
        host.setting, port.setting, cacheDir, allowedSource, allowPrivateSource, allowPrivateSources.setting, signingKey, signingKeyFile,
        signatureMigration.setting, preset, presetsOnly.setting, localRoot, s3Endpoint, s3Region.setting, resultStore,
        maxSourceBytes.setting, maxSourcePixels.setting, maxAnimationFrames.setting, maxResultPixels.setting, concurrency.setting,
        cacheControlMaxAge.setting, renderTimeout.setting, clientTimeout.setting, shutdownDelay.setting, memoryBudgetMiB.setting,
        quality.setting, autoFormats.setting, watermark, dialect, thumborKey, thumborAllowUnsafe, otelEndpoint,
    ]

    /// Seconds as the flags take them: `30`, `0.5`.
    private static func seconds(_ duration: Duration) -> String {
        let seconds = duration / .seconds(1)
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
