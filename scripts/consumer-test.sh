#!/usr/bin/env bash
# A SwiftPM package outside the repository, written as a user writes one, depends on the library
# (by path here; users write `.package(url: ".../swift-webimage.git", from: "X.Y.Z")`), builds from
# nothing, decodes a JPEG and a PNG through `ImageCodersManager`, and must have compiled none of the
# service's or the CLI's packages: no Hummingbird, ArgumentParser, Prometheus, swift-configuration
# or ServiceLifecycle module. A debug build from a clean scratch directory (about 6 min on 2 cores).
# Usage: scripts/consumer-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
say() { printf 'consumer-test: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
started=$SECONDS
scripts/install-deps.sh >&2
work=$(mktemp -d /tmp/webimage-consumer.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Named as users name the dependency, so the product line reads as in the README.
ln -s "$repo" "$work/swift-webimage"
mkdir -p "$work/Consumer/Sources/Consumer"
cat > "$work/Consumer/Package.swift" <<'SWIFT'
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(path: "../swift-webimage")],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "WebImage", package: "swift-webimage")]),
    ]
)
SWIFT
cat > "$work/Consumer/Sources/Consumer/main.swift" <<'SWIFT'
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

// Decodes each file named on the command line: "name format WxH".
for path in CommandLine.arguments.dropFirst() {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let image = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
    print("\(URL(fileURLWithPath: path).lastPathComponent) \(image.format) \(image.width)x\(image.height)")
}
print("swift-webimage \(WebImageVersion.current)")
SWIFT
/usr/bin/python3 - "$work" <<'PY'
import sys
from PIL import Image
image = Image.new("RGB", (40, 30), (200, 30, 90))
image.save(f"{sys.argv[1]}/a.jpg", quality=90)
image.save(f"{sys.argv[1]}/a.png")
PY
(cd "$work/Consumer" && swift build --product Consumer > "$work/build.log" 2>&1) || { tail -30 "$work/build.log" >&2; fail "the consumer package did not build"; }
say "built in $((SECONDS - started)) s"
output=$("$work/Consumer/.build/debug/Consumer" "$work/a.jpg" "$work/a.png") || fail "the consumer failed: $output"
echo "$output" >&2
grep -qx 'a.jpg jpeg 40x30' <<< "$output" || fail "a.jpg was not decoded as a 40x30 JPEG"
grep -qx 'a.png png 40x30' <<< "$output" || fail "a.png was not decoded as a 40x30 PNG"
# What was compiled: SwiftPM makes a <Module>.build directory for every module of the graph, but
# writes objects (.o) only into those it compiles.
compiled=$(find "$work/Consumer/.build/debug/" -mindepth 2 -maxdepth 3 -name '*.o' -path '*.build/*' |
    sed -E 's|.*/([^/]+)\.build/.*|\1|' | sort -u)
grep -qx WebImage <<< "$compiled" || fail "the scan found no WebImage module: the build layout changed ($compiled)"
service=$(grep -E '^(Hummingbird|ArgumentParser|Prometheus|Configuration|ServiceLifecycle|UnixSignals|WebImageServer|WebImageCLI)' <<< "$compiled" || true)
[ -z "$service" ] || fail "a library user compiled the service's packages: $(echo $service)"
say "passed: decoded a JPEG and a PNG; compiled $(wc -l <<< "$compiled") modules, none of the service's ($((SECONDS - started)) s)"
