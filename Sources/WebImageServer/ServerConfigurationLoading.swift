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
        public var allowedSources: [String] = []
        public var allowPrivateSources: Bool?
        public var signingKey: String?
        public var maxSourceBytes: Int?
        public var maxSourcePixels: Int?
        public var concurrency: Int?
        public var cacheControlMaxAge: Int?
        /// `--memory-budget-mib`, in MiB.
        public var memoryBudgetMiB: Int?

        /// No flags.
        public init() {}
    }

    /// The environment variable naming a JSON config file.
    public static let configFileVariable = "WEBIMAGE_CONFIG_FILE"

    /// The configuration from, first to last: the flags, the environment (`WEBIMAGE_` and the
    /// flag's name in capitals, `-` as `_`: `WEBIMAGE_CACHE_DIR`; lists comma-separated), the JSON
    /// file named by `WEBIMAGE_CONFIG_FILE` (keys as the flags are named: `{"cache-dir": "/var/cache/webimage"}`),
    /// and the defaults (the memory budget's from the control group's limit: ``defaultMemoryBudgetMiB(memory:)``).
    /// - Throws: ``ServiceError`` for a value out of range, or the file's parse error.
    public static func resolve(_ flags: Flags, environment: [String: String] = ProcessInfo.processInfo.environment,
                               memory: CgroupMemory = .current) async throws -> ServerConfiguration {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func put(_ key: String, _ content: ConfigContent?, secret: Bool = false) {
            if let content { values[AbsoluteConfigKey([key])] = ConfigValue(content, isSecret: secret) }
        }
        put("host", flags.host.map { .string($0) })
        put("port", flags.port.map { .int($0) })
        put("cache-dir", flags.cacheDirectory.map { .string($0) })
        put("allow-source", flags.allowedSources.isEmpty ? nil : .stringArray(flags.allowedSources))
        put("allow-private-sources", flags.allowPrivateSources.map { .bool($0) })
        put("signing-key", flags.signingKey.map { .string($0) }, secret: true)
        put("max-source-bytes", flags.maxSourceBytes.map { .int($0) })
        put("max-source-pixels", flags.maxSourcePixels.map { .int($0) })
        put("concurrency", flags.concurrency.map { .int($0) })
        put("cache-control-max-age", flags.cacheControlMaxAge.map { .int($0) })
        put("memory-budget-mib", flags.memoryBudgetMiB.map { .int($0) })

        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: values),
            EnvironmentVariablesProvider(environmentVariables: environment,
                                         secretsSpecifier: .specific(["WEBIMAGE_SIGNING_KEY"])).prefixKeys(with: "webimage"),
        ]
        if let file = environment[configFileVariable], !file.isEmpty {
            providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
        }
        let reader = ConfigReader(providers: providers)
        let defaults = ServerConfiguration()
        let budgetMiB = reader.int(forKey: "memory-budget-mib", default: defaultMemoryBudgetMiB(memory: memory))
        guard (minimumMemoryBudgetMiB...maximumMemoryBudgetMiB).contains(budgetMiB) else {
            throw ServiceError.badParameter("memory-budget-mib must be in \(minimumMemoryBudgetMiB)...\(maximumMemoryBudgetMiB)")
        }
        let configuration = ServerConfiguration(
            host: reader.string(forKey: "host", default: defaults.host),
            port: reader.int(forKey: "port", default: defaults.port),
            cacheDirectory: reader.string(forKey: "cache-dir"),
            allowedSources: reader.stringArray(forKey: "allow-source", default: []),
            allowPrivateSources: reader.bool(forKey: "allow-private-sources", default: false),
            signingKey: reader.string(forKey: "signing-key", isSecret: true),
            maxSourceBytes: Int64(reader.int(forKey: "max-source-bytes", default: Int(defaults.maxSourceBytes))),
            maxSourcePixels: reader.int(forKey: "max-source-pixels", default: defaults.maxSourcePixels),
            concurrency: reader.int(forKey: "concurrency", default: defaults.concurrency),
            cacheControlMaxAge: reader.int(forKey: "cache-control-max-age", default: defaults.cacheControlMaxAge),
            memoryBudgetBytes: budgetMiB << 20)
        try configuration.validate()
        return configuration
    }

    /// The memory budget when none is given, in MiB: 1024, or three quarters of the control
    /// group's memory limit when that is less (a container's limit, a systemd unit's `MemoryMax=`),
    /// leaving the rest for the process's baseline, the source bodies being fetched and the
    /// kernel's page cache; never below ``minimumMemoryBudgetMiB``.
    public static func defaultMemoryBudgetMiB(memory: CgroupMemory = .current) -> Int {
        let fallback = ServerConfiguration().memoryBudgetBytes >> 20
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
        guard memoryBudgetBytes >= ServerConfiguration.minimumMemoryBudgetMiB << 20 else {
            throw ServiceError.badParameter("memory-budget-mib must be at least \(ServerConfiguration.minimumMemoryBudgetMiB)")
        }
        guard cacheControlMaxAge >= 0 else { throw ServiceError.badParameter("cache-control-max-age must be at least 0") }
        if let signingKey, signingKey.isEmpty { throw ServiceError.badParameter("signing-key must not be empty") }
        _ = try SourceGuard(allowPrivateSources: allowPrivateSources, allowedSources: allowedSources)
    }

    /// The settings as printed on start, one `name: value` a line; the signing key is not shown.
    public var summary: String {
        [
            "host: \(host)",
            "port: \(port)",
            "cache-dir: \(cacheDirectory ?? "(none: memory only)")",
            "allow-source: \(allowedSources.isEmpty ? "(none)" : allowedSources.joined(separator: ", "))",
            "allow-private-sources: \(allowPrivateSources)",
            "signing-key: \(signingKey == nil ? "(none: unsigned requests accepted)" : "(set)")",
            "max-source-bytes: \(maxSourceBytes)",
            "max-source-pixels: \(maxSourcePixels)",
            "concurrency: \(concurrency)",
            "cache-control-max-age: \(cacheControlMaxAge)",
            "memory-budget-mib: \(memoryBudgetBytes >> 20) (memory cache \(memoryCacheBytes >> 20) MiB, renders \(renderBudgetBytes >> 20) MiB, "
                + "animation frames \(animationByteLimit >> 20) MiB)",
        ].joined(separator: "\n")
    }
}
