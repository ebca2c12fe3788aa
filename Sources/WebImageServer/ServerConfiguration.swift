#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The credentials `s3://` sources and the result store are signed with (the library's
/// ``/WebImage/S3Configuration/Credentials``).
public typealias S3Credentials = S3Configuration.Credentials

/// Everything `webimage serve` can be told: flags, a config file or environment variables all end
/// up here.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to listen on.
    public var host: String
    /// The port to listen on; 0 picks a free one (tests).
    public var port: Int
    /// Where output bytes are cached on disk; `nil` keeps them in memory only.
    public var cacheDirectory: String?
    /// `--allowed-source`: URL prefixes a source must match (``SourceAllowList``); empty, any
    /// public source may be fetched.
    public var allowedSourcePrefixes: [String]
    /// `--allow-private-source`: hosts (`HOST` or `HOST:PORT`) exempt from the private-address guard.
    public var privateSourceHosts: [String]
    /// Lifts the private-address guard for every host.
    public var allowPrivateSources: Bool
    /// With keys, every request needs `sig`, the hex HMAC-SHA256 of its query without `sig`
    /// under any one of them (several while a key is rotated).
    public var signingKeys: [String]
    /// `--signature-migration` (default on in this release, off from the next): a signature over
    /// the query alone, as made before signatures named their endpoint, verifies too (for any
    /// endpoint); off, only a signature over the endpoint and the query does
    /// (``RequestSignature/message(endpoint:query:)``). For moving signers over; warned of at start.
    public var signatureMigration: Bool = ServeSetting.signatureMigration.defaultValue
    /// `--preset NAME=QUERY`: named parameter sets a request applies with `preset=NAME[,NAME...]`.
    public var presets: [String: String]
    /// `--presets-only`: a request may carry only `url`, `preset`, `format` and `sig`.
    public var presetsOnly: Bool
    /// `--local-root`: the directory `local:///PATH` sources are read from (never outside it);
    /// `nil`: local sources are refused with 403.
    public var localRoot: String?
    /// `--s3-endpoint`: an S3-compatible store addressed path-style (`http://minio:9000`); `nil`:
    /// AWS's regional virtual-host endpoint.
    public var s3Endpoint: String?
    /// `--s3-region` (default `AWS_REGION`, else `us-east-1`): the region requests are signed for.
    public var s3Region: String
    /// From `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`; `nil`: S3 reads go unsigned.
    public var s3Credentials: S3Credentials?
    /// `--result-store s3://BUCKET/PREFIX`: rendered outputs are looked up there before
    /// rendering and written there after (in the background), so a fleet shares its work and a
    /// restarted instance starts warm; read and written through the S3 settings above. `nil`: none.
    public var resultStore: String?
    /// The largest source body accepted, in bytes (413 beyond it).
    public var maxSourceBytes: Int64
    /// The most pixels a source may have (413 beyond it); an animation kept animated counts
    /// every frame it renders (width × height × frames, as imgproxy's `MAX_SRC_RESOLUTION`).
    public var maxSourcePixels: Int
    /// `--max-animation-frames N` (default ``defaultMaxAnimationFrames``): the most frames of an
    /// animation rendered; an animation with more is rendered as its first N frames (imgproxy's
    /// `MAX_ANIMATION_FRAMES`, whose default, 1, renders every animation as a still).
    public var maxAnimationFrames: Int = ServerConfiguration.defaultMaxAnimationFrames
    /// `--max-result-pixels N` (default ``ServeSetting/maxResultPixels``): the most pixels an output may have, every
    /// frame of an animated one counted (422 `resultTooLarge` beyond it), checked before anything
    /// is decoded.
    public var maxResultPixels: Int = ServeSetting.maxResultPixels.defaultValue
    /// How many image requests may be rendering or waiting at once (503 beyond it).
    public var concurrency: Int
    /// `Cache-Control: public, max-age=S` on image responses.
    public var cacheControlMaxAge: Int
    /// The memory the service may take above its baseline, in bytes: its memory cache plus the
    /// renders in flight (`--memory-budget-mib`, default 1 GiB). A render is admitted only when
    /// its estimate fits in what the renders in flight leave (it waits otherwise, 413 when it
    /// could never fit); source bodies are bounded apart by `maxSourceBytes`.
    public var memoryBudgetBytes: Int
    /// How many bytes of rendered outputs and sources the memory cache keeps: a quarter of the
    /// budget, at most 128 MiB.
    public var memoryCacheBytes: Int { min(128 << 20, memoryBudgetBytes / 4) }
    /// How many bytes the renders in flight may hold together: the budget less the memory cache.
    public var renderBudgetBytes: Int { memoryBudgetBytes - memoryCacheBytes }
    /// The most bytes all decoded frames of one animation may take: 256 MiB, or half the render
    /// budget when that is less, so an animated render always fits in the budget.
    public var animationByteLimit: Int { min(256 << 20, renderBudgetBytes / 2) }
    /// How long a source may stay silent before the request fails with 504 (a whole fetch gets
    /// four times this).
    public var sourceTimeout: Duration = .seconds(15)
    /// `--render-timeout S` (default 30 s): a render (its wait for the memory budget, decode,
    /// transforms, encode) past it answers 503 `renderTimedOut` and is cancelled, its budget freed.
    public var renderTimeout: Duration = ServeSetting.renderTimeout.defaultValue
    /// `--client-timeout S` (default 10 s): a connection that has not sent a complete request
    /// head this long after it opened or after its last response is closed (slow-loris clients).
    public var clientTimeout: Duration = ServeSetting.clientTimeout.defaultValue
    /// `--shutdown-delay S` (default 0): after SIGTERM, `/readyz` answers 503 at once while the
    /// server goes on serving for this long before it stops accepting connections, so a load
    /// balancer that polls readiness takes the instance out of rotation first.
    public var shutdownDelay: Duration = ServeSetting.shutdownDelay.defaultValue
    /// `--quality FORMAT=Q,...`: the quality of each lossy output format when a request has no
    /// `q` (``defaultQualities`` for those not named).
    public var qualities: [ImageFormat: Int] = ServerConfiguration.defaultQualities
    /// `--auto-formats LIST`: the formats `format=auto` tries, in order, among those `Accept`
    /// names (``FormatNegotiation/autoFormatCandidates``; default `avif,webp`).
    public var autoFormats: [ImageFormat] = ServeSetting.autoFormats.defaultValue
    /// `--otel-endpoint URL`: where `webimage serve` exports its spans over OTLP/HTTP (the base
    /// URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`, which it also reads); `nil`: none unless the
    /// environment names one, the trace context still carried to the origin. An application
    /// embedding ``WebImageService`` bootstraps its own tracer and ignores this.
    public var otelEndpoint: String?
    /// `--dialect NAME[=PREFIX]`, repeatable: the URL grammars of other image services served
    /// beside `/image` (``DialectMount``); two at one prefix are refused at start.
    public var dialects: [DialectMount] = []
    /// `--thumbor-key KEY` (also `WEBIMAGE_THUMBOR_KEY`, `THUMBOR_SECURITY_KEY`): thumbor's
    /// `SECURITY_KEY`, with which `--dialect thumbor` checks a URL's HMAC-SHA1 hash; `nil`: only
    /// `unsafe/` URLs are served.
    public var thumborKey: String?
    /// `--thumbor-allow-unsafe` (`--no-thumbor-allow-unsafe`): whether `--dialect thumbor` serves `unsafe/` URLs; `nil`
    /// (the default): only when no ``thumborKey`` is set (thumbor allows them by default; a key set
    /// here means signing is wanted).
    public var thumborAllowUnsafe: Bool?
    /// imgproxy's settings under their own names (`IMGPROXY_KEY`, ...), read when `--dialect
    /// imgproxy` is on (``ImgproxySettings``): the dialect's own; those with a twin here set the twin.
    public var imgproxy = ImgproxySettings()
    /// `--watermark FILE`: the image `wm` composites (any decodable image; alpha kept); `nil`:
    /// `wm` is refused with 400.
    public var watermarkFile: String?
    /// The deprecated setting names the configuration was given under (`allow-source`), so the
    /// summary shows a setting under the name its operator used.
    var deprecatedNamesUsed: Set<String> = []
    /// The proxy the environment names for sources (`http_proxy`, `https_proxy`), if any: warned of at start.
    var sourceProxy: String?

    /// The former name of ``privateSourceHosts`` (`--allow-source`).
    @available(*, deprecated, renamed: "privateSourceHosts")
    public var allowedSources: [String] {
        get { privateSourceHosts }
        set { privateSourceHosts = newValue }
    }

    /// The only signing key, or the first of several; setting it replaces them all.
    @available(*, deprecated, renamed: "signingKeys")
    public var signingKey: String? {
        get { signingKeys.first }
        set { signingKeys = newValue.map { [$0] } ?? [] }
    }

    /// A configuration with the defaults ``ServeSetting`` declares.
    public init(host: String = ServeSetting.host.defaultValue, port: Int = ServeSetting.port.defaultValue, cacheDirectory: String? = nil,
                allowedSourcePrefixes: [String] = [], privateSourceHosts: [String] = [],
                allowPrivateSources: Bool = ServeSetting.allowPrivateSources.defaultValue,
                signingKeys: [String] = [], presets: [String: String] = [:], presetsOnly: Bool = ServeSetting.presetsOnly.defaultValue,
                localRoot: String? = nil, s3Endpoint: String? = nil, s3Region: String = ServeSetting.s3Region.defaultValue,
                s3Credentials: S3Credentials? = nil, resultStore: String? = nil,
                maxSourceBytes: Int64 = ServeSetting.maxSourceBytes.defaultValue, maxSourcePixels: Int = ServeSetting.maxSourcePixels.defaultValue,
                concurrency: Int = ServeSetting.concurrency.defaultValue, cacheControlMaxAge: Int = ServeSetting.cacheControlMaxAge.defaultValue,
                memoryBudgetBytes: Int = ServeSetting.memoryBudgetMiB.defaultValue << 20) {
        self.host = host
        self.port = port
        self.cacheDirectory = cacheDirectory
        self.allowedSourcePrefixes = allowedSourcePrefixes
        self.privateSourceHosts = privateSourceHosts
        self.allowPrivateSources = allowPrivateSources
        self.signingKeys = signingKeys
        self.presets = presets
        self.presetsOnly = presetsOnly
        self.localRoot = localRoot
        self.s3Endpoint = s3Endpoint
        self.s3Region = s3Region
        self.s3Credentials = s3Credentials
        self.resultStore = resultStore
        self.maxSourceBytes = maxSourceBytes
        self.maxSourcePixels = maxSourcePixels
        self.concurrency = concurrency
        self.cacheControlMaxAge = cacheControlMaxAge
        self.memoryBudgetBytes = memoryBudgetBytes
    }

    /// The quality of each lossy format when neither `q` nor `--quality` says
    /// (``ServeSetting/quality``'s default: JPEG 80, WebP 80, AVIF 60, JPEG XL 80).
    public static let defaultQualities: [ImageFormat: Int] = ServeSetting.quality.defaultValue

    /// The most frames of an animation rendered when `--max-animation-frames` does not say
    /// (``ServeSetting/maxAnimationFrames``'s default, 500).
    public static let defaultMaxAnimationFrames = ServeSetting.maxAnimationFrames.defaultValue

    /// The smallest budget accepted, in MiB: the memory cache's quarter and room for a 2 MP render.
    public static let minimumMemoryBudgetMiB = 32
    /// The largest budget accepted, in MiB (1 TiB), so its size in bytes never overflows.
    public static let maximumMemoryBudgetMiB = 1 << 20
}
