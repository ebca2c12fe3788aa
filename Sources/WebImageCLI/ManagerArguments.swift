import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The options `load` and `prefetch` share: where the cache is and how requests are made.
struct ManagerArguments: ParsableArguments {
    @OptionGroup var place: CacheLocationArguments

    @Option(help: "How many URLs load at once.")
    var concurrency = 6

    @Option(help: "Idle timeout of a download, in seconds.")
    var timeout = 15.0

    @Option(help: "Total deadline of a download, in seconds, however steadily bytes arrive.")
    var resourceTimeout = 60.0

    @Option(help: ArgumentHelp("Trust the certificates in this PEM file too (a private CA or a self-signed server).",
                               valueName: "PEM"))
    var caFile: String?

    @Flag(help: "Skip TLS certificate validation (test servers only).")
    var allowInvalidCertificates = false

    @Option(name: .customLong("pin-sha256"),
            help: ArgumentHelp("Require a certificate whose public key (SPKI) has this base64 SHA-256 in every https server's chain (repeatable; 'sha256/' prefix optional).",
                               valueName: "BASE64"))
    var pins: [String] = []

    @Option(help: ArgumentHelp("Send this client certificate (PEM) to servers that ask for one (mutual TLS); needs --client-key.",
                               valueName: "PEM"))
    var clientCert: String?

    @Option(help: ArgumentHelp("The private key (PEM) of --client-cert.", valueName: "PEM"))
    var clientKey: String?

    @Option(name: .customLong("header"), help: "An extra request header, 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(help: ArgumentHelp("Send requests through this HTTP proxy, http://[user:password@]host[:port] "
                               + "(default: the http_proxy, https_proxy and no_proxy variables; no_proxy applies to this one too).",
                               valueName: "URL"))
    var proxy: String?

    @Option(name: .customLong("http-version"),
            help: ArgumentHelp("Which HTTP to speak: auto (the default: HTTP/2 when an https server offers it by ALPN, "
                               + "else HTTP/1.1), 1.1 (HTTP/1.1 only) "
                               + "or 2 (HTTP/2 only: h2 over https, h2c by prior knowledge over http).",
                               valueName: "auto|1.1|2"))
    var httpVersion: HTTPVersionArgument = .auto

    @Option(help: "Send a download that failed transiently (no connection, a timeout, 408, 429, 500, 502-504) again, at most this many times.")
    var retries = 0

    @Option(help: "The memory cache limit in MiB (default: a fifth of physical memory, at most 1 GiB).")
    var memoryLimit: Int?

    @Option(name: .customLong("local-root"),
            help: ArgumentHelp("Load local:///PATH URLs from inside this directory (never outside it).", valueName: "DIR"))
    var localRoot: String?

    @Option(name: .customLong("s3-endpoint"),
            help: ArgumentHelp("S3-compatible store for s3://BUCKET/KEY URLs, path-style (default AWS_ENDPOINT_URL_S3, else AWS's regional endpoint); "
                               + "signed with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when set.", valueName: "URL"))
    var s3Endpoint: String?

    @Option(name: .customLong("s3-region"), help: "Region s3:// requests are signed for (default AWS_REGION, else us-east-1).")
    var s3Region: String?

    @Option(help: "A file of URLs, one per line (blank lines and lines starting with # are skipped).")
    var urlsFile: String?

    /// Where `s3://` URLs are read: the environment's settings, the flags over them.
    func s3Configuration(environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Configuration {
        var s3 = S3Configuration.environment(environment)
        if let s3Endpoint { s3.endpoint = URL(string: s3Endpoint) }
        if let s3Region { s3.region = s3Region }
        return s3
    }

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be at least 1") }
        if let s3Endpoint {
            guard let url = URL(string: s3Endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw ValidationError("--s3-endpoint must be an http(s) URL")
            }
        }
        guard (0...Self.maxRetries).contains(retries) else { throw ValidationError("--retries must be from 0 to \(Self.maxRetries), got \(retries)") }
        do {
            try proxySettings().validate()
        } catch {
            throw ValidationError("--proxy \(proxy.map { $0 } ?? "(from the environment)"): \(error)")
        }
        if let memoryLimit, memoryLimit < 0 { throw ValidationError("--memory-limit must not be negative") }
        _ = try Self.duration(seconds: timeout, option: "--timeout")
        _ = try Self.duration(seconds: resourceTimeout, option: "--resource-timeout")
        _ = try parsedHeaders()
        _ = try clientCertificate()
        _ = try serverTrust()
        if let caFile {
            guard let pem = try? String(contentsOfFile: caFile, encoding: .utf8) else {
                throw ValidationError("--ca-file: cannot read \(caFile)")
            }
            guard pem.contains("-----BEGIN CERTIFICATE-----") else {
                throw ValidationError("--ca-file: no PEM certificate in \(caFile)")
            }
        }
    }

    /// `--client-cert` and `--client-key` read, or `nil` when not given; a validation error names
    /// the option that cannot be used.
    func clientCertificate() throws -> ClientCertificate? {
        guard clientCert != nil || clientKey != nil else { return nil }
        guard let clientCert, let clientKey else { throw ValidationError("--client-cert and --client-key go together") }
        guard let certificate = try? String(contentsOfFile: clientCert, encoding: .utf8),
              certificate.contains("-----BEGIN CERTIFICATE-----") else {
            throw ValidationError("--client-cert: no PEM certificate in \(clientCert)")
        }
        guard let key = try? String(contentsOfFile: clientKey, encoding: .utf8), key.contains("PRIVATE KEY-----") else {
            throw ValidationError("--client-key: no PEM private key in \(clientKey)")
        }
        return ClientCertificate(certificateChainPEM: certificate, privateKeyPEM: key)
    }

    /// `--pin-sha256` as a trust setting for every host, or `nil` when none is given.
    func serverTrust() throws -> ServerTrust? {
        guard !pins.isEmpty else { return nil }
        for pin in pins {
            let base64 = pin.hasPrefix("sha256/") ? String(pin.dropFirst("sha256/".count)) : pin
            guard let digest = Data(base64Encoded: base64), digest.count == 32 else {
                throw ValidationError("--pin-sha256 needs the base64 of a SHA-256 digest (32 bytes), got '\(pin)'")
            }
        }
        return ServerTrust(pins: ["*": Set(pins)])
    }

    /// The most retries `--retries` takes: more only hammers a failing server.
    static let maxRetries = 20

    /// `--proxy` with the environment's `no_proxy`, else the environment's settings.
    func proxySettings() -> HTTPProxySettings {
        let environment = HTTPProxySettings.environment()
        return proxy.map { HTTPProxySettings(proxy: $0, noProxy: environment.noProxy) } ?? environment
    }

    /// The longest timeout taken as given; longer ones are clamped to it (a year is "never").
    static let longestTimeout = 365.0 * 24 * 3600

    /// `seconds` as a duration: positive and finite, or a validation error naming `option`;
    /// clamped to ``longestTimeout``.
    static func duration(seconds: Double, option: String) throws -> Duration {
        guard seconds.isFinite, seconds > 0 else {
            throw ValidationError("\(option) must be a positive number of seconds, got \(seconds)")
        }
        return .milliseconds(Int64((min(seconds, longestTimeout) * 1000).rounded(.up)))
    }

    /// The headers as a dictionary.
    func parsedHeaders() throws -> [String: String] {
        var result: [String: String] = [:]
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("--header needs 'Name: value', got '\(header)'") }
            let name = header[..<colon].trimmingSpacesAndTabs
            guard !name.isEmpty else { throw ValidationError("--header needs a name, got '\(header)'") }
            let value = header[header.index(after: colon)...].trimmingSpacesAndTabs
            do {
                try ImageLoadRequest.validateHeader(name: name, value: value)
            } catch {
                throw ValidationError("--header \(header.debugDescription): \(error)")
            }
            result[name] = value
        }
        return result
    }

    /// The URLs from the file (if any) followed by `arguments`, in order, repeats kept.
    func urls(_ arguments: [String]) throws -> [URL] {
        var lines: [String] = []
        if let urlsFile {
            let text = try String(contentsOfFile: urlsFile, encoding: .utf8)
            lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingSpacesAndTabs }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        return try (lines + arguments).map { text in
            guard let url = URL(string: text), url.scheme != nil else { throw ValidationError("not a URL: \(text)") }
            return url
        }
    }

    /// A manager over the chosen disk cache, downloading `concurrency` at a time.
    func makeManager() -> ImageManager {
        let memory = MemoryCache<String, DecodedImage>(costLimit: memoryLimit.map { $0 << 20 } ?? MemoryCache<String, DecodedImage>.defaultCostLimit)
        let cache = ImageCache(memoryCache: memory, diskCache: DiskCache(configuration: place.configuration()))
        // `validate()` checked the timeouts, the PEM files and the pins.
        let pem = caFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        var configuration = ImageDownloaderConfiguration(
            maxConcurrentDownloads: concurrency,
            timeout: (try? Self.duration(seconds: timeout, option: "--timeout")) ?? ImageLoaderDefaults.idleTimeout,
            allowsInvalidCertificates: allowInvalidCertificates,
            resourceTimeout: (try? Self.duration(seconds: resourceTimeout, option: "--resource-timeout"))
                ?? ImageLoaderDefaults.resourceTimeout,
            trustedCertificatesPEM: pem.map { [$0] } ?? [],
            proxy: proxySettings(),
            retryPolicy: retries > 0 ? HTTPRetryPolicy(maxRetries: retries) : nil)
        configuration.httpVersion = httpVersion.downloader
        configuration.serverTrust = try? serverTrust()
        configuration.clientCertificate = try? clientCertificate()
        configuration.localRoot = localRoot
        configuration.s3 = s3Configuration()
        let downloader = ImageDownloader(configuration: configuration)
        return ImageManager(cache: cache, loader: downloader)
    }
}

/// `--http-version`'s values, spelled as on the command line.
enum HTTPVersionArgument: String, ExpressibleByArgument, CaseIterable {
    case auto
    case http1_1 = "1.1"
    case http2 = "2"

    var downloader: HTTPVersionPreference {
        switch self {
        case .auto: .auto
        case .http1_1: .http1_1
        case .http2: .http2
        }
    }
}
