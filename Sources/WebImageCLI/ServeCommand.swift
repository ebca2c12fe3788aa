import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import WebImageServer

/// `webimage serve`: fetches remote images and serves them resized and re-encoded over HTTP.
///
/// Its flags' names and help are ``ServeSetting``'s, one property each: ArgumentParser needs a
/// declared property per flag, and a test checks the binary's flags against the table.
///
/// Every flag can also come from the environment (`WEBIMAGE_PORT`, `WEBIMAGE_CACHE_DIR`...) or
/// from the JSON file `WEBIMAGE_CONFIG_FILE` names; a flag wins over both. Flags have no
/// defaults here so that they do not hide those; the defaults are ``ServerConfiguration``'s.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve remote images resized and re-encoded over HTTP (GET /image, /healthz, /metrics).",
        discussion: """
        GET /image?url=URL&w=W&h=H&fit=contain|cover|fill|pad&enlarge=1&format=auto|jpeg|png|webp|avif|gif|jxl&q=Q
          [&gravity=center|top|...|bottom-right|smart][&focus=X,Y][&dpr=D][&crop=X,Y,W,H][&rotate=90|180|270][&flip=h|v|hv]
          [&blur=S][&sharpen=S][&bg=RRGGBB[AA]][&progressive=1][&wm=OPACITY&wm_gravity=G&wm_scale=F][&preset=NAME,...][&sig=HEX]
        Settings also come from WEBIMAGE_<FLAG> environment variables (WEBIMAGE_CACHE_DIR...) and the
        JSON file named by WEBIMAGE_CONFIG_FILE ({"port": 8080, "allowed-source": ["https://images.example/"],
        "presets": {"thumb": "w=300&h=300&fit=cover"}}).
        """
    )

    @Option(name: .customLong(ServeSetting.host.name), help: ArgumentHelp(ServeSetting.host.setting))
    var host: String?

    @Option(name: .customLong(ServeSetting.port.name), help: ArgumentHelp(ServeSetting.port.setting))
    var port: Int?

    @Option(name: .customLong(ServeSetting.cacheDir.name), help: ArgumentHelp(ServeSetting.cacheDir))
    var cacheDir: String?

    @Option(name: .customLong(ServeSetting.allowedSource.name), help: ArgumentHelp(ServeSetting.allowedSource))
    var allowedSource: [String] = []

    @Option(name: .customLong(ServeSetting.allowPrivateSource.name), help: ArgumentHelp(ServeSetting.allowPrivateSource))
    var allowPrivateSource: [String] = []

    // The table declares the former name; the flags test runs this binary, so a table without one fails there.
    @Option(name: .customLong(ServeSetting.allowPrivateSource.formerName!),
            help: ArgumentHelp("Deprecated name of \(ServeSetting.allowPrivateSource.flag).", valueName: ServeSetting.allowPrivateSource.valueName))
    var allowSource: [String] = []

    @Flag(name: .customLong(ServeSetting.allowPrivateSources.name), help: ArgumentHelp(ServeSetting.allowPrivateSources.setting))
    var allowPrivateSources = false

    @Option(name: .customLong(ServeSetting.signingKey.name), help: ArgumentHelp(ServeSetting.signingKey))
    var signingKey: [String] = []

    @Option(name: .customLong(ServeSetting.signingKeyFile.name), help: ArgumentHelp(ServeSetting.signingKeyFile))
    var signingKeyFile: String?

    @Flag(name: .customLong(ServeSetting.signatureMigration.name), inversion: .prefixedNo, help: ArgumentHelp(ServeSetting.signatureMigration.setting))
    var signatureMigration: Bool?

    @Option(name: .customLong(ServeSetting.preset.name), help: ArgumentHelp(ServeSetting.preset))
    var preset: [String] = []

    @Flag(name: .customLong(ServeSetting.presetsOnly.name), help: ArgumentHelp(ServeSetting.presetsOnly.setting))
    var presetsOnly = false

    @Option(name: .customLong(ServeSetting.localRoot.name), help: ArgumentHelp(ServeSetting.localRoot))
    var localRoot: String?

    @Option(name: .customLong(ServeSetting.s3Endpoint.name), help: ArgumentHelp(ServeSetting.s3Endpoint))
    var s3Endpoint: String?

    @Option(name: .customLong(ServeSetting.s3Region.name), help: ArgumentHelp(ServeSetting.s3Region.setting))
    var s3Region: String?

    @Option(name: .customLong(ServeSetting.resultStore.name), help: ArgumentHelp(ServeSetting.resultStore))
    var resultStore: String?

    @Option(name: .customLong(ServeSetting.maxSourceBytes.name), help: ArgumentHelp(ServeSetting.maxSourceBytes.setting))
    var maxSourceBytes: Int?

    @Option(name: .customLong(ServeSetting.maxSourcePixels.name), help: ArgumentHelp(ServeSetting.maxSourcePixels.setting))
    var maxSourcePixels: Int?

    @Option(name: .customLong(ServeSetting.maxAnimationFrames.name), help: ArgumentHelp(ServeSetting.maxAnimationFrames.setting))
    var maxAnimationFrames: Int?

    @Option(name: .customLong(ServeSetting.maxResultPixels.name), help: ArgumentHelp(ServeSetting.maxResultPixels.setting))
    var maxResultPixels: Int?

    @Option(name: .customLong(ServeSetting.concurrency.name), help: ArgumentHelp(ServeSetting.concurrency.setting))
    var concurrency: Int?

    @Option(name: .customLong(ServeSetting.cacheControlMaxAge.name), help: ArgumentHelp(ServeSetting.cacheControlMaxAge.setting))
    var cacheControlMaxAge: Int?

    @Option(name: .customLong(ServeSetting.renderTimeout.name), help: ArgumentHelp(ServeSetting.renderTimeout.setting))
    var renderTimeout: Double?

    @Option(name: .customLong(ServeSetting.clientTimeout.name), help: ArgumentHelp(ServeSetting.clientTimeout.setting))
    var clientTimeout: Double?

    @Option(name: .customLong(ServeSetting.shutdownDelay.name), help: ArgumentHelp(ServeSetting.shutdownDelay.setting))
    var shutdownDelay: Double?

    @Option(name: .customLong(ServeSetting.memoryBudgetMiB.name), help: ArgumentHelp(ServeSetting.memoryBudgetMiB.setting))
    var memoryBudgetMib: Int?

    @Option(name: .customLong(ServeSetting.quality.name), help: ArgumentHelp(ServeSetting.quality.setting))
    var quality: [String] = []

    @Option(name: .customLong(ServeSetting.autoFormats.name), help: ArgumentHelp(ServeSetting.autoFormats.setting))
    var autoFormats: String?

    @Option(name: .customLong(ServeSetting.watermark.name), help: ArgumentHelp(ServeSetting.watermark))
    var watermark: String?

    @Option(name: .customLong(ServeSetting.dialect.name), help: ArgumentHelp(ServeSetting.dialect))
    var dialect: [String] = []

    @Option(name: .customLong(ServeSetting.thumborKey.name), help: ArgumentHelp(ServeSetting.thumborKey))
    var thumborKey: String?

    @Flag(name: .customLong(ServeSetting.thumborAllowUnsafe.name), inversion: .prefixedNo, help: ArgumentHelp(ServeSetting.thumborAllowUnsafe))
    var thumborAllowUnsafe: Bool?

    @Option(name: .customLong(ServeSetting.otelEndpoint.name), help: ArgumentHelp(ServeSetting.otelEndpoint))
    var otelEndpoint: String?

    func run() async throws {
        var flags = ServerConfiguration.Flags()
        flags.host = host
        flags.port = port
        flags.cacheDirectory = cacheDir
        flags.allowedSourcePrefixes = allowedSource
        flags.privateSourceHosts = allowPrivateSource
        flags.allowedSources = allowSource
        flags.allowPrivateSources = allowPrivateSources ? true : nil
        flags.signingKeys = signingKey
        flags.signingKeyFile = signingKeyFile
        flags.presets = preset
        flags.presetsOnly = presetsOnly ? true : nil
        flags.localRoot = localRoot
        flags.s3Endpoint = s3Endpoint
        flags.s3Region = s3Region
        flags.resultStore = resultStore
        flags.maxSourceBytes = maxSourceBytes
        flags.maxSourcePixels = maxSourcePixels
        flags.signatureMigration = signatureMigration
        flags.otelEndpoint = otelEndpoint
        flags.dialects = dialect
        flags.thumborKey = thumborKey
        flags.thumborAllowUnsafe = thumborAllowUnsafe
        flags.maxAnimationFrames = maxAnimationFrames
        flags.maxResultPixels = maxResultPixels
        flags.concurrency = concurrency
        flags.cacheControlMaxAge = cacheControlMaxAge
        flags.renderTimeout = renderTimeout
        flags.clientTimeout = clientTimeout
        flags.shutdownDelay = shutdownDelay
        flags.memoryBudgetMiB = memoryBudgetMib
        flags.qualities = quality
        flags.autoFormats = autoFormats
        flags.watermarkFile = watermark
        let configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.resolve(flags)
        } catch let error as ServiceError {
            throw ValidationError(error.message)
        }
        for warning in configuration.startWarnings {
            writeToStandardError("webimage serve: \(warning)\n")
        }
        print("webimage serve settings:\n" + configuration.summary)
        fflush(nil)
        // One log line per request at info; WEBIMAGE_LOG_LEVEL=debug adds each render's timings,
        // =warning keeps a benchmark's stderr quiet.
        var logger = Logger(label: "webimage.serve")
        logger.logLevel = ProcessInfo.processInfo.environment["WEBIMAGE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        // Before the server: its service takes the process's tracer when it is made.
        let tracing = try ServeTracing.bootstrap(endpoint: configuration.otelEndpoint, environment: ProcessInfo.processInfo.environment)
        let server = try ImageServer(configuration: configuration, logger: logger, metrics: .process)
        try await server.run(alongside: [tracing]) { port in
            // Flushed at once: scripts and tests wait for this line on a pipe.
            print("webimage serve: listening on http://\(configuration.host):\(port)")
            fflush(nil)
        }
        print("webimage serve: stopped")
    }
}

extension ArgumentHelp {
    /// A serve flag's help as its ``ServeSetting`` declares it.
    init(_ setting: ServeSetting) {
        self.init(setting.help, valueName: setting.valueName)
    }
}
