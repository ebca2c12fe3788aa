// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets over the decoders and the disk-cache entry reader, in its own package (like Benchmarks/) so that users and
// CI of the library never build it. Build and run it with Fuzz/run.sh.
let package = Package(
    name: "swift-webimage-fuzz",
    dependencies: [.package(name: "swift-webimage", path: "..")],
    targets: [
        .executableTarget(
            name: "DecodeFuzzer",
            dependencies: [.product(name: "WebImage", package: "swift-webimage")]
        ),
        .executableTarget(
            name: "DiskEntryFuzzer",
            dependencies: [.product(name: "WebImage", package: "swift-webimage")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
