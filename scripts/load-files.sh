#!/usr/bin/env bash
# Lists the library files one image load crosses, measured rather than read: `webimage load`
# built with source-based coverage loads one JPEG from a loopback origin in one process and 20
# distinct URLs of it in another; a file whose executed regions ran more often in the second
# process is crossed by every load (the rest ran once, to set the process up). Library files
# only (WebImage, WebImageHTTP, WebImageSupport), not the CLI's. The list in the DocC article
# "How a load flows" is this script's output.
#
# Usage: scripts/load-files.sh            (builds .build/debug with --enable-code-coverage)
# Needs: python3 with Pillow (for the test image), llvm-profdata and llvm-cov beside swift.
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=$(dirname "$(command -v swift)")
for tool in llvm-profdata llvm-cov; do
    [ -x "$bin_dir/$tool" ] || { echo "$tool not found beside swift in $bin_dir" >&2; exit 1; }
done
swift build --enable-code-coverage --product webimage >&2
webimage=.build/debug/webimage

work=$(mktemp -d)
origin_pid=""
cleanup() { [ -n "$origin_pid" ] && kill "$origin_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir "$work/www"
python3 - "$work/www/photo.jpg" <<'PY'
import sys
from PIL import Image
image = Image.new("RGB", (1024, 768))
pixels = image.load()
for y in range(768):
    for x in range(0, 1024, 4):
        pixels[x, y] = (x % 256, y % 256, (x * y) % 256)
image.save(sys.argv[1], quality=85)
PY
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/www" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
origin_pid=$!
for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/photo.jpg" && break
    sleep 0.1
done

# Each process with its own empty disk cache, so every load misses, downloads, decodes and stores.
LLVM_PROFILE_FILE="$work/one.profraw" "$webimage" load --cache-dir "$work/cache-one" \
    "http://127.0.0.1:$port/photo.jpg?n=0" >/dev/null
urls=()
for n in $(seq 1 20); do urls+=("http://127.0.0.1:$port/photo.jpg?n=$n"); done
LLVM_PROFILE_FILE="$work/many.profraw" "$webimage" load --cache-dir "$work/cache-many" --concurrency 1 \
    "${urls[@]}" >/dev/null
for run in one many; do
    "$bin_dir/llvm-profdata" merge -o "$work/$run.profdata" "$work/$run.profraw"
    "$bin_dir/llvm-cov" export "$webimage" -instr-profile "$work/$run.profdata" -skip-expansions > "$work/$run.json"
done

python3 - "$work/one.json" "$work/many.json" "$PWD/" <<'PY'
import json, sys
from collections import defaultdict
root = sys.argv[3]
def counts(path):
    files = {}
    for entry in json.load(open(path))["data"][0]["files"]:
        name = entry["filename"].replace(root, "")
        if not name.startswith(("Sources/WebImage/", "Sources/WebImageHTTP/", "Sources/WebImageSupport/")):
            continue
        # A segment: line, column, count, has a count, starts a region, is a gap.
        files[name] = {(s[0], s[1]): s[2] for s in entry["segments"] if s[3] and s[4]}
    return files
one, many = counts(sys.argv[1]), counts(sys.argv[2])
crossed, setup = [], []
for name, regions in sorted(many.items()):
    if not any(regions.values()):
        continue
    grew = any(count > one.get(name, {}).get(at, 0) for at, count in regions.items())
    (crossed if grew else setup).append(name)
by_folder = defaultdict(list)
for name in crossed:
    by_folder[name.rsplit("/", 1)[0]].append(name.rsplit("/", 1)[1])
print(f"{len(crossed)} files run for every load ({len(setup)} more ran only to set the process up)")
for folder, names in by_folder.items():
    print(f"{folder}/ ({len(names)}): {', '.join(names)}")
print("set-up only:", ", ".join(name.split("Sources/", 1)[1] for name in setup))
PY
