#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Configuration
import SystemPackage
import WebImage

extension ServerConfiguration {
    /// The settings given on the command line; `nil` (or an empty list) means not given.
    public struct Flags: Sendable {
        public var host: String?
        public var port: Int?
        public var cacheDirectory: String?
        /// `--allowed-source PREFIX`, repeated.
        public var allowedSourcePrefixes: [String] = []
        /// `--allow-private-source HOST[:PORT]`, repeated.
        public var privateSourceHosts: [String] = []
        /// `--allow-source HOST[:PORT]`, the deprecated name of `--allow-private-source`.
        public var allowedSources: [String] = []
        public var allowPrivateSources: Bool?
        /// `--signing-key`, repeated.
        public var signingKeys: [String] = []
        /// `--signing-key-file FILE`.
        public var signingKeyFile: String?
        /// `--signature-migration` / `--no-signature-migration`.
        public var signatureMigration: Bool?
        /// `--preset NAME=QUERY`, repeated.
        public var presets: [String] = []
        public var presetsOnly: Bool?
        /// `--local-root DIR`.
        public var localRoot: String?
        /// `--s3-endpoint URL`.
        public var s3Endpoint: String?
        /// `--s3-region REGION`.
        public var s3Region: String?
        /// `--result-store s3://BUCKET/PREFIX`.
        public var resultStore: String?
        public var maxSourceBytes: Int?
        public var maxSourcePixels: Int?
        /// `--max-animation-frames N`.
        public var maxAnimationFrames: Int?
        /// `--max-result-pixels N`.
        public var maxResultPixels: Int?
        public var concurrency: Int?
        public var cacheControlMaxAge: Int?
        /// `--memory-budget-mib`, in MiB.
        public var memoryBudgetMiB: Int?
        /// `--render-timeout S`.
        public var renderTimeout: Double?
        /// `--client-timeout S`.
        public var clientTimeout: Double?
        /// `--shutdown-delay S`.
        public var shutdownDelay: Double?
        /// `--quality FORMAT=Q,...`, repeatable (the lists are joined).
        public var qualities: [String] = []
        /// `--auto-formats LIST`, comma-separated.
        public var autoFormats: String?
        /// `--watermark FILE`.
        public var watermarkFile: String?
        /// `--otel-endpoint URL`.
        public var otelEndpoint: String?
        /// `--dialect NAME[=PREFIX]`, repeated.
        public var dialects: [String] = []
        /// `--thumbor-key KEY`.
        public var thumborKey: String?
        /// `--thumbor-allow-unsafe`, `--no-thumbor-allow-unsafe`.
        public var thumborAllowUnsafe: Bool?

        /// No flags.
        public init() {}

        /// The only `--signing-key`, or the first; setting it replaces them all.
        @available(*, deprecated, renamed: "signingKeys")
        public var signingKey: String? {
            get { signingKeys.first }
            set { signingKeys = newValue.map { [$0] } ?? [] }
        }
    }

    /// The environment variable naming a JSON config file.
    public static let configFileVariable = "WEBIMAGE_CONFIG_FILE"

    /// The configuration from, first to last: the flags, the environment (`WEBIMAGE_` and the
    /// flag's name in capitals, `-` as `_`: `WEBIMAGE_CACHE_DIR`; lists comma-separated), the JSON
    /// file named by `WEBIMAGE_CONFIG_FILE` (keys as the flags are named: `{"cache-dir": "/var/cache/webimage"}`),
    /// and the defaults (the memory budget's from the control group's limit: ``defaultMemoryBudgetMiB(memory:)``).
    ///
    /// Two settings differ from that scheme. `WEBIMAGE_SIGNING_KEY` is one key, never split at
    /// commas (a key may hold any character: split, one key would become two shorter ones); the
    /// config file's `signing-key` may be a string or a list. Presets merge by name, a flag's
    /// over the environment's (`WEBIMAGE_PRESET=thumb=w=300&h=300,small=w=64`) over the file's
    /// (`"presets": {"thumb": "w=300&h=300"}`). The deprecated names `--allow-source`,
    /// `WEBIMAGE_ALLOW_SOURCE` and `allow-source` still work, each layer's new name over its old
    /// one; ``startWarnings`` names those used.
    /// - Throws: ``ServiceError`` for a value out of range or a file that cannot be read, or the
    ///   config file's parse error.
    public static func resolve(_ flags: Flags, environment: [String: String] = ProcessInfo.processInfo.environment,
                               memory: CgroupMemory = .current) async throws -> ServerConfiguration {
        typealias Setting = ServeSetting
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func put(_ setting: ServeSetting, _ content: ConfigContent?) {
            if let content { values[AbsoluteConfigKey([setting.configKey])] = ConfigValue(content, isSecret: setting.isSecret) }
        }
        let privateHostFlags = flags.privateSourceHosts + flags.allowedSources
        put(Setting.host.setting, flags.host.map { .string($0) })
        put(Setting.port.setting, flags.port.map { .int($0) })
        put(Setting.cacheDir, flags.cacheDirectory.map { .string($0) })
        put(Setting.allowedSource, flags.allowedSourcePrefixes.isEmpty ? nil : .stringArray(flags.allowedSourcePrefixes))
        put(Setting.allowPrivateSource, privateHostFlags.isEmpty ? nil : .stringArray(privateHostFlags))
        put(Setting.allowPrivateSources.setting, flags.allowPrivateSources.map { .bool($0) })
        put(Setting.signingKeyFile, flags.signingKeyFile.map { .string($0) })
        put(Setting.signatureMigration.setting, flags.signatureMigration.map { .bool($0) })
        put(Setting.presetsOnly.setting, flags.presetsOnly.map { .bool($0) })
        put(Setting.localRoot, flags.localRoot.map { .string($0) })
        put(Setting.s3Endpoint, flags.s3Endpoint.map { .string($0) })
        put(Setting.s3Region.setting, flags.s3Region.map { .string($0) })
        put(Setting.resultStore, flags.resultStore.map { .string($0) })
        put(Setting.maxSourceBytes.setting, flags.maxSourceBytes.map { .int($0) })
        put(Setting.maxSourcePixels.setting, flags.maxSourcePixels.map { .int($0) })
        put(Setting.maxAnimationFrames.setting, flags.maxAnimationFrames.map { .int($0) })
        put(Setting.maxResultPixels.setting, flags.maxResultPixels.map { .int($0) })
        put(Setting.concurrency.setting, flags.concurrency.map { .int($0) })
        put(Setting.cacheControlMaxAge.setting, flags.cacheControlMaxAge.map { .int($0) })
        put(Setting.memoryBudgetMiB.setting, flags.memoryBudgetMiB.map { .int($0) })
        put(Setting.renderTimeout.setting, flags.renderTimeout.map { .double($0) })
        put(Setting.clientTimeout.setting, flags.clientTimeout.map { .double($0) })
        put(Setting.shutdownDelay.setting, flags.shutdownDelay.map { .double($0) })
        put(Setting.quality.setting, flags.qualities.isEmpty ? nil : .string(flags.qualities.joined(separator: ",")))
        put(Setting.autoFormats.setting, flags.autoFormats.map { .string($0) })
        put(Setting.watermark, flags.watermarkFile.map { .string($0) })
        put(Setting.otelEndpoint, flags.otelEndpoint.map { .string($0) })
        put(Setting.dialect, flags.dialects.isEmpty ? nil : .stringArray(flags.dialects))
        put(Setting.thumborKey, flags.thumborKey.map { .string($0) })
        put(Setting.thumborAllowUnsafe, flags.thumborAllowUnsafe.map { .bool($0) })

        // Each layer answers for a renamed setting under its new name, then under its old one.
        let renamed = Dictionary(uniqueKeysWithValues: ServeSetting.all.compactMap { setting in
            setting.formerName.map { (setting.configKey, $0) }
        })
        func withOldNames<Provider: ConfigProvider>(_ provider: Provider) -> KeyMappingProvider<Provider> {
            provider.mapKeys { key in
                guard key.components.count == 1, let old = renamed[key.components[0]] else { return key }
                return AbsoluteConfigKey([old])
            }
        }
        let secrets = ServeSetting.all.filter(\.isSecret).map(\.environmentVariable)
        let environmentProvider = EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(Set(secrets)))
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: values),
            environmentProvider.prefixKeys(with: "webimage"),
            withOldNames(environmentProvider.prefixKeys(with: "webimage")),
        ]
        var deprecatedNamesUsed: Set<String> = []
        // `Flags.allowedSources` is the one former flag.
        let formerHosts = Setting.allowPrivateSource
        if !flags.allowedSources.isEmpty, let former = formerHosts.formerName { deprecatedNamesUsed.insert("--" + former) }
        for variable in ServeSetting.all.compactMap(\.formerEnvironmentVariable) where environment[variable] != nil {
            deprecatedNamesUsed.insert(variable)
        }
        var filePresets: [String: String] = [:]
        if let file = environment[configFileVariable], !file.isEmpty {
            let fileProvider = try await FileProvider<JSONSnapshot>(filePath: FilePath(file))
            providers.append(fileProvider)
            providers.append(withOldNames(fileProvider))
            if let former = formerHosts.formerName, ConfigReader(provider: fileProvider).stringArray(forKey: ConfigKey(former)) != nil {
                deprecatedNamesUsed.insert(former)
            }
            filePresets = try ConfigFilePresets.read(from: file)
        }
        let reader = ConfigReader(providers: providers)
        let defaults = ServerConfiguration()
        let budgetMiB = reader.int(forKey: Setting.memoryBudgetMiB.key, default: defaultMemoryBudgetMiB(memory: memory))
        guard (minimumMemoryBudgetMiB...maximumMemoryBudgetMiB).contains(budgetMiB) else {
            throw ServiceError.badParameter("\(Setting.memoryBudgetMiB.name) must be in \(minimumMemoryBudgetMiB)...\(maximumMemoryBudgetMiB)")
        }
        // The flags' keys, else one string (the environment's or the file's), else the file's list:
        // the flags are not asked through the reader, where a list would not read as a string
        // and the environment's key would win over them.
        var signingKeys = flags.signingKeys.isEmpty
            ? reader.string(forKey: Setting.signingKey.key, isSecret: true).map { [$0] }
                ?? reader.stringArray(forKey: Setting.signingKey.key, isSecret: true, default: [])
            : flags.signingKeys
        if let keyFile = reader.string(forKey: Setting.signingKeyFile.key) { signingKeys += try SigningKeyFile.keys(in: keyFile) }
        // By name: the flags' over the environment's over the file's (whose `presets` object
        // ConfigFilePresets read above).
        var presets = filePresets
        let environmentReader = ConfigReader(provider: environmentProvider.prefixKeys(with: "webimage"))
        for definition in environmentReader.stringArray(forKey: ConfigKey(Setting.preset.name), default: []) + flags.presets {
            let (name, query) = try ImagePresets.definition(definition)
            presets[name] = query
        }
        var configuration = ServerConfiguration(
            host: reader.string(forKey: Setting.host.key, default: defaults.host),
            port: reader.int(forKey: Setting.port.key, default: defaults.port),
            cacheDirectory: reader.string(forKey: Setting.cacheDir.key),
            allowedSourcePrefixes: reader.stringArray(forKey: Setting.allowedSource.key, default: []),
            privateSourceHosts: reader.stringArray(forKey: Setting.allowPrivateSource.key, default: []),
            allowPrivateSources: reader.bool(forKey: Setting.allowPrivateSources.key, default: defaults.allowPrivateSources),
            signingKeys: signingKeys,
            presets: presets,
            presetsOnly: reader.bool(forKey: Setting.presetsOnly.key, default: defaults.presetsOnly),
            localRoot: reader.string(forKey: Setting.localRoot.key),
            s3Endpoint: reader.string(forKey: Setting.s3Endpoint.key),
            s3Region: reader.string(forKey: Setting.s3Region.key)
                ?? Setting.s3Region.fallbackVariables.lazy.compactMap { environment[$0].flatMap { $0.isEmpty ? nil : $0 } }.first
                ?? defaults.s3Region,
            s3Credentials: S3Credentials.environment(environment),
            resultStore: reader.string(forKey: Setting.resultStore.key),
            maxSourceBytes: Int64(reader.int(forKey: Setting.maxSourceBytes.key, default: Int(defaults.maxSourceBytes))),
            maxSourcePixels: reader.int(forKey: Setting.maxSourcePixels.key, default: defaults.maxSourcePixels),
            concurrency: reader.int(forKey: Setting.concurrency.key, default: defaults.concurrency),
            cacheControlMaxAge: reader.int(forKey: Setting.cacheControlMaxAge.key, default: defaults.cacheControlMaxAge),
            memoryBudgetBytes: budgetMiB << 20)
        configuration.deprecatedNamesUsed = deprecatedNamesUsed
        configuration.sourceProxy = HTTPProxySettings.environment(environment).httpProxy
            ?? HTTPProxySettings.environment(environment).httpsProxy
        configuration.signatureMigration = reader.bool(forKey: Setting.signatureMigration.key, default: defaults.signatureMigration)
        configuration.maxAnimationFrames = reader.int(forKey: Setting.maxAnimationFrames.key, default: defaults.maxAnimationFrames)
        configuration.maxResultPixels = reader.int(forKey: Setting.maxResultPixels.key, default: defaults.maxResultPixels)
        func seconds(_ setting: ServeSetting.WithDefault<Duration>, allowsZero: Bool) throws -> Duration {
            try Self.seconds(setting.name, reader.double(forKey: setting.key, default: setting.defaultValue / .seconds(1)), allowsZero: allowsZero)
        }
        configuration.renderTimeout = try seconds(Setting.renderTimeout, allowsZero: false)
        configuration.clientTimeout = try seconds(Setting.clientTimeout, allowsZero: false)
        configuration.shutdownDelay = try seconds(Setting.shutdownDelay, allowsZero: true)
        // A comma-separated string (a flag, the environment, the file) or the file's list.
        func list(_ setting: ServeSetting) -> String? {
            reader.string(forKey: setting.key) ?? reader.stringArray(forKey: setting.key)?.joined(separator: ",")
        }
        if let text = list(Setting.quality.setting) { configuration.qualities = try Self.qualities(text) }
        if let text = list(Setting.autoFormats.setting) { configuration.autoFormats = try Self.autoFormats(text) }
        configuration.watermarkFile = reader.string(forKey: Setting.watermark.key)
        configuration.otelEndpoint = reader.string(forKey: Setting.otelEndpoint.key)
        configuration.dialects = try (reader.stringArray(forKey: Setting.dialect.key) ?? reader.string(forKey: Setting.dialect.key).map { [$0] } ?? [])
            .flatMap { $0.split(separator: ",").map { String($0.trimmingSpacesAndTabs) } }
            .map(DialectMount.init(parsing:))
        // thumbor's own variable last: a deployment moving from thumbor keeps its environment.
        configuration.thumborKey = reader.string(forKey: Setting.thumborKey.key, isSecret: true)
            ?? Setting.thumborKey.fallbackVariables.lazy.compactMap { environment[$0].flatMap { $0.isEmpty ? nil : $0 } }.first
        configuration.thumborAllowUnsafe = reader.bool(forKey: Setting.thumborAllowUnsafe.key)
        // imgproxy's own names, only for a deployment that serves its URLs; the service's own
        // settings (flag, WEBIMAGE_ variable, config key) win over their IMGPROXY_ twins.
        if configuration.dialects.contains(where: { $0.name == .imgproxy }) {
            try ImgproxySettings.apply(environment: environment, to: &configuration) { name in
                let key = ConfigKey(name)
                return reader.string(forKey: key) != nil || reader.int(forKey: key) != nil || reader.double(forKey: key) != nil
                    || reader.stringArray(forKey: key) != nil || reader.bool(forKey: key) != nil
            }
        }
        try configuration.validate()
        return configuration
    }

    /// `value` seconds as a duration: finite, at most a day, above zero unless `allowsZero`.
    /// - Throws: ``ServiceError`` naming the setting.
    static func seconds(_ name: String, _ value: Double, allowsZero: Bool) throws -> Duration {
        guard value.isFinite, value <= 86_400, allowsZero ? value >= 0 : value > 0 else {
            throw ServiceError.badParameter("\(name) must be \(allowsZero ? "0" : "more than 0") to 86400 seconds")
        }
        return .nanoseconds(Int64((value * 1e9).rounded()))
    }

    /// `--quality`'s `FORMAT=Q,...` (`jpeg=85,avif=50`) over ``defaultQualities``.
    /// - Throws: ``ServiceError`` naming the entry that is not a lossy format with a quality in 1...100.
    public static func qualities(_ text: String) throws -> [ImageFormat: Int] {
        var qualities = defaultQualities
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: "=", omittingEmptySubsequences: false).map { $0.trimmingSpacesAndTabs.lowercased() }
            guard parts.count == 2, let format = ImageFormat(rawValue: parts[0] == "jpg" ? "jpeg" : parts[0]),
                  defaultQualities[format] != nil, let quality = Int(parts[1]), (1...100).contains(quality) else {
                throw ServiceError.badParameter("quality '\(entry)': expected FORMAT=Q, FORMAT one of jpeg, webp, avif, jxl and Q in 1...100")
            }
            qualities[format] = quality
        }
        return qualities
    }

    /// `--auto-formats`' list (`avif,webp`, in the order `format=auto` tries them; may be empty).
    /// - Throws: ``ServiceError`` naming a format that is not avif, webp or jxl, or one given twice.
    public static func autoFormats(_ text: String) throws -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for name in text.split(separator: ",").map({ $0.trimmingSpacesAndTabs.lowercased() }) where !name.isEmpty {
            guard let format = ImageFormat(rawValue: name), FormatNegotiation.autoFormatCandidates.contains(format) else {
                throw ServiceError.badParameter("auto-formats: '\(name)' is not one of avif, webp, jxl")
            }
            guard !formats.contains(format) else { throw ServiceError.badParameter("auto-formats: '\(name)' given twice") }
            formats.append(format)
        }
        return formats
    }

    /// The memory budget when none is given, in MiB: 1024, or three quarters of the control
    /// group's memory limit when that is less (a container's limit, a systemd unit's `MemoryMax=`),
    /// leaving the rest for the process's baseline, the source bodies being fetched and the
    /// kernel's page cache; never below ``minimumMemoryBudgetMiB``.
    public static func defaultMemoryBudgetMiB(memory: CgroupMemory = .current) -> Int {
        let fallback = ServeSetting.memoryBudgetMiB.defaultValue
        guard let limit = memory.limit else { return fallback }
        return max(minimumMemoryBudgetMiB, min(fallback, (limit / 4 * 3) >> 20))
    }

    /// Checks the ranges.
    /// - Throws: ``ServiceError`` naming the setting.
    public func validate() throws {
        guard (0...65535).contains(port) else { throw ServiceError.badParameter("port must be in 0...65535") }
        guard concurrency >= 1 else { throw ServiceError.badParameter("concurrency must be at least 1") }
        guard maxSourceBytes >= 1 else { throw ServiceError.badParameter("max-source-bytes must be at least 1") }
        guard maxSourcePixels >= 1 else { throw ServiceError.badParameter("max-source-pixels must be at least 1") }
        guard maxAnimationFrames >= 1 else { throw ServiceError.badParameter("max-animation-frames must be at least 1") }
        guard maxResultPixels >= 1 else { throw ServiceError.badParameter("max-result-pixels must be at least 1") }
        guard memoryBudgetBytes >= ServerConfiguration.minimumMemoryBudgetMiB << 20 else {
            throw ServiceError.badParameter("memory-budget-mib must be at least \(ServerConfiguration.minimumMemoryBudgetMiB)")
        }
        guard cacheControlMaxAge >= 0 else { throw ServiceError.badParameter("cache-control-max-age must be at least 0") }
        if signingKeys.contains(where: \.isEmpty) { throw ServiceError.badParameter("signing-key must not be empty") }
        _ = try SourceGuard(allowPrivateSources: allowPrivateSources, privateSourceHosts: privateSourceHosts,
                            allowedSourcePrefixes: allowedSourcePrefixes)
        _ = try ImagePresets(presets)
        if presetsOnly, presets.isEmpty { throw ServiceError.badParameter("presets-only needs at least one preset") }
        if let s3Endpoint {
            guard let url = URL(string: s3Endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  url.host?.isEmpty == false, url.user == nil, url.query == nil else {
                throw ServiceError.badParameter("s3-endpoint must be an http(s) URL: \(s3Endpoint)")
            }
        }
        guard !s3Region.isEmpty, s3Region.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
            throw ServiceError.badParameter("s3-region must be a region name like eu-west-1")
        }
        if let resultStore { _ = try ResultStore.validated(resultStore) }
        if let otelEndpoint {
            guard let url = URL(string: otelEndpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw ServiceError.badParameter("otel-endpoint must be an http(s) URL: \(otelEndpoint)")
            }
        }
        try DialectMount.checkDistinct(dialects)
        if let watermarkFile, !FileManager.default.isReadableFile(atPath: watermarkFile) {
            throw ServiceError.badParameter("watermark \(watermarkFile) is not a readable file")
        }
        if let localRoot {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: localRoot, isDirectory: &isDirectory), isDirectory else {
                throw ServiceError.badParameter("local-root \(localRoot) is not a directory")
            }
        }
    }

    /// The lines to print on stderr on start: a deprecated name used, an open proxy.
    public var startWarnings: [String] {
        var warnings: [String] = []
        for setting in ServeSetting.all {
            guard let former = setting.formerName, let formerVariable = setting.formerEnvironmentVariable else { continue }
            if deprecatedNamesUsed.contains("--" + former) { warnings.append("--\(former) is deprecated; use \(setting.flag)") }
            if deprecatedNamesUsed.contains(formerVariable) {
                warnings.append("\(formerVariable) is deprecated; use \(setting.environmentVariable)")
            }
            if deprecatedNamesUsed.contains(former) { warnings.append("config key \(former) is deprecated; use \(setting.configKey)") }
        }
        if !signingKeys.isEmpty, signatureMigration {
            warnings.append("signatures over the query alone are accepted for every endpoint (--signature-migration, "
                + "off by default from the next release): sign the endpoint and the query, then set --no-signature-migration")
        }
        if signingKeys.contains(where: { $0.utf8.count < SigningKeyFile.minimumKeyBytes }) {
            warnings.append("a signing key is shorter than \(SigningKeyFile.minimumKeyBytes) bytes: use a random key of 32 bytes or more")
        }
        if sourceProxy != nil {
            warnings.append("sources are fetched through a proxy from the environment (http_proxy/https_proxy): the proxy "
                + "resolves names, so the private-address guard cannot check the addresses it connects to (DNS rebinding); "
                + "make the proxy refuse private addresses, or unset it")
        }
        if allowedSourcePrefixes.isEmpty, signingKeys.isEmpty {
            warnings.append("this instance fetches any public URL for anyone who asks (an open proxy); "
                + "restrict it with --allowed-source PREFIX or --signing-key KEY")
        }
        return warnings
    }

    /// The settings as printed on start, one `name: value` a line; the signing keys are not shown.
    /// A renamed setting is shown under the name it was given (`allow-source` for `--allow-source`).
    public var summary: String {
        let privateHostsName = deprecatedNamesUsed.isEmpty ? ServeSetting.allowPrivateSource.name
            : ServeSetting.allowPrivateSource.formerName ?? ServeSetting.allowPrivateSource.name
        let keys = switch signingKeys.count {
        case 0: "(none: unsigned requests accepted)"
        case 1: "(set)"
        default: "(\(signingKeys.count) keys set)"
        }
        // imgproxy's names only where its dialect reads them.
        let imgproxyLines: String = dialects.contains { $0.name == .imgproxy } ? "\n" + imgproxy.summary : ""
        return [
            "host: \(host)",
            "port: \(port)",
            "cache-dir: \(cacheDirectory ?? "(none: memory only)")",
            "allowed-source: \(allowedSourcePrefixes.isEmpty ? "(none: any public source)" : allowedSourcePrefixes.joined(separator: ", "))",
            "\(privateHostsName): \(privateSourceHosts.isEmpty ? "(none)" : privateSourceHosts.joined(separator: ", "))",
            "allow-private-sources: \(allowPrivateSources)",
            "signing-key: \(keys)",
            "signature-migration: \(signatureMigration)\(signatureMigration ? " (query-only signatures accepted)" : "")",
            "local-root: \(localRoot ?? "(none: local sources refused)")",
            "s3-endpoint: \(s3Endpoint ?? "(AWS: https://BUCKET.s3.\(s3Region).amazonaws.com)")",
            "s3-region: \(s3Region)",
            "s3-credentials: \(s3Credentials == nil ? "(none: unsigned reads)" : "(set)")",
            "result-store: \(resultStore ?? "(none)")",
            "presets: \(presets.isEmpty ? "(none)" : presets.keys.sorted().joined(separator: ", "))\(presetsOnly ? " (presets only)" : "")",
            "max-source-bytes: \(maxSourceBytes)",
            "max-source-pixels: \(maxSourcePixels)",
            "max-animation-frames: \(maxAnimationFrames)",
            "max-result-pixels: \(maxResultPixels)",
            "concurrency: \(concurrency)",
            "cache-control-max-age: \(cacheControlMaxAge)",
            "render-timeout: \(renderTimeout)",
            "client-timeout: \(clientTimeout)",
            "shutdown-delay: \(shutdownDelay)",
            "quality: " + qualities.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: ","),
            "auto-formats: \(autoFormats.isEmpty ? "(none: jpeg or png)" : autoFormats.map(\.rawValue).joined(separator: ","))",
            "watermark: \(watermarkFile ?? "(none: wm refused)")",
            "dialect: \(dialects.isEmpty ? "(none: /image only)" : dialects.map(\.description).joined(separator: ", "))",
            "thumbor-key: \(thumborKey == nil ? "(none: unsafe/ URLs only)" : "(set)")",
            "thumbor-allow-unsafe: \(thumborAllowUnsafe.map(String.init) ?? "(default: \(thumborKey == nil))")",
            "otel-endpoint: \(otelEndpoint ?? "(none: OTEL_EXPORTER_OTLP_ENDPOINT, else spans not exported)")",
            "memory-budget-mib: \(memoryBudgetBytes >> 20) (memory cache \(memoryCacheBytes >> 20) MiB, renders \(renderBudgetBytes >> 20) MiB, "
                + "animation frames \(animationByteLimit >> 20) MiB)",
        ].joined(separator: "\n") + imgproxyLines
    }
}

extension ServeSetting {
    /// The key the loader asks its providers for: the config key, under which the flags are put
    /// too, and which the environment provider, prefixed with `webimage`, finds as `WEBIMAGE_` and
    /// the name.
    var key: ConfigKey { ConfigKey(configKey) }
}
