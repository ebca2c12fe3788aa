// swift-tools-version:6.2
// 6.2: swift-configuration, swift-distributed-tracing, swift-log and swift-metrics declare it.
import PackageDescription

/// A system library target for one C codec: a module map and a shim header, linked against the
/// Debian package named in the module map. No third-party source lives in this repository.
func codec(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// A codec whose library is opened on first use (CCodecLibraries) on Linux: its headers only, no
/// pkg-config (whose `-l` flags would load it, and the dozens of libraries under it, at every
/// process start). Elsewhere it is linked as usual.
func lazyCodec(_ name: String, pkgConfig: String, apt: String) -> Target {
    #if os(Linux)
    .systemLibrary(name: name, providers: [.apt([apt])])
    #else
    codec(name, pkgConfig: pkgConfig, apt: apt)
    #endif
}

let package = Package(
    name: "swift-webimage",
    // Apple platforms: Synchronization's Atomic (WebImage) and swift-configuration (WebImageServer)
    // need these; Linux has no minimum.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .executable(name: "webimage", targets: ["WebImageCLI"]),
        .library(name: "WebImageServer", targets: ["WebImageServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // TLS for https loads, and for the loopback test server's https mode.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        // HTTP/2 for the loader (ALPN h2 over TLS, prior-knowledge h2c) and the loopback test server.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // `webimage serve`: the HTTP image service (WebImageServer) and its operations.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The service's spans (and `InMemoryTracing` in its tests); Hummingbird depends on it already.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.3.0"),
        // `webimage serve`'s own tracer and OTLP/HTTP exporter (WebImageCLI only: neither the
        // library nor WebImageServer builds it). Its OTLP/HTTP trait alone, so no gRPC stack.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        codec("CJPEG", pkgConfig: "libturbojpeg", apt: "libturbojpeg0-dev"),
        // libjpeg's full API, for the JPEGs TurboJPEG will not classify.
        codec("CJPEGLib", pkgConfig: "libjpeg", apt: "libjpeg62-turbo-dev"),
        codec("CPNG", pkgConfig: "spng", apt: "libspng-dev"),
        codec("CWebP", pkgConfig: "libwebpdemux", apt: "libwebp-dev"),
        .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
        codec("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        lazyCodec("CAVIF", pkgConfig: "libavif", apt: "libavif-dev"),
        lazyCodec("CHEIF", pkgConfig: "libheif", apt: "libheif-dev"),
        lazyCodec("CJXL", pkgConfig: "libjxl", apt: "libjxl-dev"),
        // libheif, libavif and libjxl opened with dlopen when a coder first needs them (Linux);
        // linked as usual elsewhere.
        .target(
            name: "CCodecLibraries",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
                + ["heif", "avif", "jxl", "jxl_threads"].map {
                    .linkedLibrary($0, .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .windows]))
                }
        ),
        // The resampler's inner passes, built for the baseline and for AVX2 (see resampling.h).
        .target(name: "CResampling"),
        // Little CMS: embedded ICC profiles (and PNG gAMA/cHRM) converted to sRGB.
        codec("CLCMS2", pkgConfig: "lcms2", apt: "liblcms2-dev"),
        // The lock, HTTP whitespace trimming, the partial-data throttle, hex, the UTC calendar and
        // the JSON writer: what the library, its HTTP stack, the service and the CLI share. Only
        // `package` declarations; WebImage re-exports it to the package.
        .target(
            name: "WebImageSupport",
            dependencies: [.product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        // The HTTP/1.1 client behind `HTTPImageLoader`: connections, pool, exchanges, redirects,
        // cookies, header validation, TLS and transport-error mapping. It knows nothing of images
        // (no dependency on WebImage), so its security-sensitive code is reviewed on its own.
        .target(
            name: "WebImageHTTP",
            dependencies: [
                "WebImageSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        .target(
            name: "WebImage",
            dependencies: [
                "WebImageSupport", "WebImageHTTP",
                "CJPEG", "CJPEGLib", "CPNG", "CWebP", "CGIF", "CZlib", "CAVIF", "CHEIF", "CJXL", "CCodecLibraries", "CLCMS2",
                "CResampling",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The image service behind `webimage serve`: the pipeline over real HTTP traffic.
        .target(
            name: "WebImageServer",
            dependencies: [
                "WebImage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "WebImageCLI",
            dependencies: [
                "WebImage",
                "WebImageServer",
                // The demo's drawn images and static server; nothing from WebImageTestSupport ships.
                "WebImageDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "WebImageDemo",
            dependencies: [
                "WebImage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "WebImageTestSupport",
            dependencies: [
                "WebImage",
                "WebImageDemo",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        .testTarget(
            name: "WebImageTests",
            dependencies: [
                "WebImage", "WebImageTestSupport", "WebImageServer", "CLCMS2",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "WebImageHTTPTests",
            dependencies: ["WebImageHTTP", "WebImageTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer targets (Fuzz/Sources; build and run one with Fuzz/run.sh, which sets
// WEBIMAGE_FUZZ=1): absent unless that variable is set, so users of the library never build
// them. Only the project's own modules get coverage and AddressSanitizer (the codecs under them
// are Debian's uninstrumented libraries either way). The packages below them are compiled as
// for the tests, so a fuzz build in the test build's directory (CI: `Fuzz/run.sh --scratch-path
// .build`) reuses their objects rather than compiling NIO and BoringSSL again with other flags.
if Context.environment["WEBIMAGE_FUZZ"] == "1" {
    let instrumented: [SwiftSetting] = [.unsafeFlags(["-sanitize=fuzzer,address"])]
    // WebImageServer is built only for QueryFuzzer; Hummingbird under it is not instrumented.
    for target in package.targets where ["WebImageSupport", "WebImageHTTP", "WebImage", "WebImageServer"].contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + instrumented
    }
    // The project's own C (the resampler's passes) too.
    for target in package.targets where target.name == "CResampling" {
        target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-fsanitize=fuzzer-no-link,address"])]
    }
    func fuzzer(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
        // lld: gold stops with an internal error on the sanitized link.
        .executableTarget(name: name, dependencies: ["FuzzSupport", "WebImage"] + dependencies, path: "Fuzz/Sources/\(name)",
                          swiftSettings: instrumented, linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])])
    }
    package.targets += [
        .target(name: "FuzzSupport", dependencies: ["WebImage"], path: "Fuzz/Sources/FuzzSupport", swiftSettings: instrumented),
        // The hostile server of the HTTP fuzzers: the client's own connections on in-memory channels.
        .target(name: "HTTPFuzzSupport", dependencies: [
            "WebImageHTTP", "WebImageSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], path: "Fuzz/Sources/HTTPFuzzSupport", swiftSettings: instrumented),
        // Every registered decoder at once (the target CI runs).
        fuzzer("DecodeFuzzer"),
        // One decoder each, so each gets its own coverage and execution count.
        fuzzer("JPEGFuzzer"),
        // The 1/8-scale JPEG DC decoder alone (the project's own Huffman decoding).
        fuzzer("JPEGEighthScaleFuzzer"),
        fuzzer("PNGFuzzer"),
        fuzzer("GIFFuzzer"),
        fuzzer("WebPFuzzer"),
        // The resampler's C passes on any geometry, both builds compared.
        fuzzer("ResamplerFuzzer"),
        // The disk cache's entry reader: whoever can write to the cache directory controls its input.
        fuzzer("DiskEntryFuzzer"),
        // The HTTP/1.1 client reading whatever a hostile server sends (in memory: EmbeddedChannel).
        fuzzer("HTTPResponseFuzzer", ["HTTPFuzzSupport"]),
        // The HTTP/2 client against a hostile server's frames (in memory, as after ALPN).
        fuzzer("HTTP2FrameFuzzer", ["HTTPFuzzSupport", .product(name: "NIOHTTP2", package: "swift-nio-http2")]),
        // The service's query and preset parsers: a request's query is anyone's to write.
        fuzzer("QueryFuzzer", ["WebImageServer"]),
    ]
}
