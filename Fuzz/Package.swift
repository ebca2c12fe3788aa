// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets in their own package (like Benchmarks/), so that users of the library never
// build them. Build and run one with Fuzz/run.sh; Fuzz/campaign.sh runs the decoder targets and
// keeps the ledger of executions (Fuzz/campaigns.tsv).
func fuzzer(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport", .product(name: "WebImage", package: "swift-webimage")] + dependencies)
}

let package = Package(
    name: "swift-webimage-fuzz",
    dependencies: [
        .package(name: "swift-webimage", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "WebImage", package: "swift-webimage")]),
        // Every registered decoder at once (the target CI runs).
        fuzzer("DecodeFuzzer"),
        // One decoder each, so each gets its own coverage and execution count.
        fuzzer("JPEGFuzzer"),
        fuzzer("PNGFuzzer"),
        fuzzer("GIFFuzzer"),
        fuzzer("WebPFuzzer"),
        // The disk cache's entry reader: whoever can write to the cache directory controls its input.
        fuzzer("DiskEntryFuzzer"),
        // The HTTP client reading whatever a hostile server sends.
        fuzzer("HTTPResponseFuzzer", [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
