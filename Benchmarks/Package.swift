// swift-tools-version:6.1
import PackageDescription

// Its own package, so the library's users and CI never build package-benchmark.
// Run: `cd Benchmarks && swift package benchmark` (or one target: `--target CodingBenchmarks`).
// Side-by-side comparisons with other tools live in scripts/.

let benchmarkTargets = ["CodingBenchmarks", "CachingBenchmarks", "LoadingBenchmarks", "PipelineBenchmarks"]

let package = Package(
    name: "swift-webimage-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-webimage", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: benchmarkTargets.map { name in
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
