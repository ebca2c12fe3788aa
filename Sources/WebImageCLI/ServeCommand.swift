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

    @Option(help: "Address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (default 8080).")
    var port: Int?

    @Option(name: .customLong("cache-dir"), help: "Directory for the rendered-output disk cache (default: memory only).")
    var cacheDir: String?

    @Option(name: .customLong("allowed-source"),
            help: ArgumentHelp("Fetch only sources under PREFIX (https://*.cdn.example.com/); repeatable.", valueName: "PREFIX"))
    var allowedSource: [String] = []

    @Option(name: .customLong("allow-private-source"),
            help: ArgumentHelp("Exempt HOST (on PORT) from the private-address guard; repeatable.", valueName: "HOST[:PORT]"))
    var allowPrivateSource: [String] = []

    @Option(name: .customLong("allow-source"), help: ArgumentHelp("Deprecated name of --allow-private-source.", valueName: "HOST[:PORT]"))
    var allowSource: [String] = []

    @Flag(name: .customLong("allow-private-sources"), help: "Allow sources on loopback, private and link-local addresses.")
    var allowPrivateSources = false

    @Option(name: .customLong("signing-key"),
            help: "Require sig=hex HMAC-SHA256(KEY, \"/image?\" or \"/info?\" + query without sig); repeatable: any key verifies.")
    var signingKey: [String] = []

    @Option(name: .customLong("signing-key-file"),
            help: ArgumentHelp("Signing keys one a line (# comments, blank lines ignored), kept out of the arguments.", valueName: "FILE"))
    var signingKeyFile: String?

    @Flag(name: .customLong("signature-migration"), inversion: .prefixedNo,
          help: "Also accept signatures over the query alone, for every endpoint (migration; default on, off from the next release).")
    var signatureMigration: Bool?

    @Option(name: .customLong("preset"),
            help: ArgumentHelp("A named set of parameters requests apply with preset=NAME[,NAME...]; repeatable.", valueName: "NAME=QUERY"))
    var preset: [String] = []

    @Flag(name: .customLong("presets-only"), help: "Accept only url, preset, format and sig in requests.")
    var presetsOnly = false

    @Option(name: .customLong("local-root"),
            help: ArgumentHelp("Serve local:///PATH sources from inside this directory (default: refused).", valueName: "DIR"))
    var localRoot: String?

    @Option(name: .customLong("s3-endpoint"),
            help: ArgumentHelp("S3-compatible store for s3://BUCKET/KEY sources, path-style (default: AWS's regional endpoint).", valueName: "URL"))
    var s3Endpoint: String?

    @Option(name: .customLong("s3-region"), help: "Region S3 reads are signed for (default AWS_REGION, else us-east-1).")
    var s3Region: String?

    @Option(name: .customLong("result-store"),
            help: ArgumentHelp("Share rendered outputs with a fleet: look them up in, and write them to, this S3 location.",
                               valueName: "s3://BUCKET/PREFIX"))
    var resultStore: String?

    @Option(name: .customLong("max-source-bytes"), help: "Largest source body accepted, bytes (default 52428800); larger: 413.")
    var maxSourceBytes: Int?

    @Option(name: .customLong("max-source-pixels"),
            help: "Most pixels a source may have, an animation's rendered frames counted (default 100000000); more: 413.")
    var maxSourcePixels: Int?

    @Option(name: .customLong("dialect"),
            help: "Also serve another image service's URLs: imgproxy[=PREFIX] or thumbor[=PREFIX] (default prefix /), repeatable.")
    var dialect: [String] = []

    @Option(name: .customLong("thumbor-key"),
            help: ArgumentHelp("thumbor's SECURITY_KEY: --dialect thumbor checks URL hashes with it (also WEBIMAGE_THUMBOR_KEY, THUMBOR_SECURITY_KEY).",
                               valueName: "KEY"))
    var thumborKey: String?

    @Flag(name: .customLong("thumbor-allow-unsafe"), inversion: .prefixedNo,
          help: "Serve thumbor's unsafe/ URLs (default: only when no --thumbor-key is set).")
    var thumborAllowUnsafe: Bool?

    @Option(name: .customLong("otel-endpoint"),
            help: ArgumentHelp("Export spans over OTLP/HTTP to this collector (as OTEL_EXPORTER_OTLP_ENDPOINT; traces to /v1/traces).",
                               valueName: "URL"))
    var otelEndpoint: String?

    @Option(name: .customLong("max-animation-frames"),
            help: "Most frames of an animation rendered; more are cut to the first N (default 500).")
    var maxAnimationFrames: Int?

    @Option(name: .customLong("max-result-pixels"),
            help: "Most pixels an output may have, every frame counted (default 100000000); more: 422.")
    var maxResultPixels: Int?

    @Option(help: "Image renders admitted at once, running or queued (default 64); more: 503 with Retry-After.")
    var concurrency: Int?

    @Option(name: .customLong("cache-control-max-age"), help: "max-age of Cache-Control on images, seconds (default 86400).")
    var cacheControlMaxAge: Int?

    @Option(name: .customLong("render-timeout"), help: ArgumentHelp("A render past this many seconds answers 503 renderTimedOut (default 30).", valueName: "S"))
    var renderTimeout: Double?

    @Option(name: .customLong("client-timeout"),
            help: ArgumentHelp("Close a connection that has not sent a complete request head this many seconds after it opened or after its last response (default 10).", valueName: "S"))
    var clientTimeout: Double?

    @Option(name: .customLong("shutdown-delay"),
            help: ArgumentHelp("After SIGTERM, answer /readyz with 503 and keep serving this many seconds before stopping (default 0).", valueName: "S"))
    var shutdownDelay: Double?

    @Option(name: .customLong("memory-budget-mib"),
            help: "Memory above the baseline for the memory cache and the renders in flight, MiB (default 1024, or 3/4 of the cgroup memory limit when less); renders wait for room.")
    var memoryBudgetMib: Int?

    @Option(name: .customLong("quality"),
            help: ArgumentHelp("Quality per output format when a request has no q (default jpeg=80,webp=80,avif=60,jxl=80); repeatable.",
                               valueName: "FORMAT=Q,..."))
    var quality: [String] = []

    @Option(name: .customLong("auto-formats"),
            help: ArgumentHelp("Formats format=auto tries, in order, among those Accept names (default avif,webp; also jxl).",
                               valueName: "LIST"))
    var autoFormats: String?

    @Option(name: .customLong("watermark"), help: ArgumentHelp("Image the wm parameter composites over outputs.", valueName: "FILE"))
    var watermark: String?

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
