// swift-tools-version:6.1
import PackageDescription

// Its own package, so the library's users and CI never build package-benchmark.
// Run: `cd Benchmarks && swift package benchmark` (or one target: `--target CodingBenchmarks`).
// Side-by-side comparisons with other tools live in scripts/.
// AHCDownloadBench (`swift build -c release --product AHCDownloadBench`) is an `ImageLoader` over
// AsyncHTTPClient and the download harness of `webimage bench-download`, for
// scripts/compare-download.sh and scripts/compare-h2.sh (AHC_BIN): our HTTP client against AHC.

let benchmarkTargets = ["CodingBenchmarks", "CachingBenchmarks", "LoadingBenchmarks", "PipelineBenchmarks"]

let package = Package(
    name: "swift-webimage-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-webimage", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
    ],
    targets: [
        .executableTarget(
            name: "AHCDownloadBench",
            dependencies: [
                .product(name: "WebImage", package: "swift-webimage"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Benchmarks/AHCDownloadBench"
        ),
    ] + benchmarkTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "WebImage", package: "swift-webimage"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/\(name)",
            swiftSettings: [.unsafeFlags(["-Ounchecked"])],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    }
)
