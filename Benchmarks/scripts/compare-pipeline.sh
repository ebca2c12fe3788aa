#!/usr/bin/env bash
# The whole pipeline against its limit: 1,000 distinct JPEGs (~100 KB) served by a local nginx,
# loaded through ImageManager (`webimage load`) cold (empty cache, default settings), warm from
# disk (a new process over the same cache directory) and warm from memory (the second pass of a
# process whose memory cache holds the whole gallery: --memory-limit 4096).
# Prints images/s for each, and for cold and warm disk the ratio to the decode-only throughput
# of the same files on every core (`webimage bench-decode-files`): how close the pipeline gets
# to the decoder, its ceiling. Goals: >= 0.8 cold, >= 0.9 warm disk.
# Decode-only reuses one output buffer per core; a second baseline (--keep) keeps every decoded
# image, so it pays for fresh memory as a pipeline whose memory cache keeps images does.
#
# Usage: Benchmarks/scripts/compare-pipeline.sh [--files N] [--concurrency N] [--rounds N]
# Env:   WEBIMAGE_BIN=path/to/webimage (default: builds the release product of this package)
set -euo pipefail

FILES=1000
CONCURRENCY=8
ROUNDS=3
source "$(dirname "$0")/bench-fixture.sh"
python3 -c 'import PIL' 2>/dev/null || { echo "Pillow not found (apt-get install python3-pil)" >&2; exit 1; }

bench_work pipeline

# Distinct photo-like JPEGs: crops of a large blurred-noise picture, 800x600 at quality 80,
# about 100 KB each (every file differs, so no cache or coalescing can cheat).
python3 - "$WORK/www" "$FILES" <<'PY'
import os, random, sys
from PIL import Image, ImageFilter
root, files = sys.argv[1], int(sys.argv[2])
random.seed(7)
base = Image.merge("RGB", [Image.effect_noise((1600, 1200), 60 + 20 * c) for c in range(3)])
base = base.filter(ImageFilter.GaussianBlur(1.2))
for n in range(files):
    x, y = random.randrange(0, 800), random.randrange(0, 600)
    base.crop((x, y, x + 800, y + 600)).save(os.path.join(root, f"{n}.jpg"), quality=80)
PY
ls "$WORK/www" | sed "s|^|$WORK/www/|" > "$WORK/files.txt"
average_kb=$(du -sk "$WORK/www" | awk -v n="$FILES" '{printf "%.0f", $1 / n}')

start_nginx
ls "$WORK/www" | sed "s|^|http://127.0.0.1:$PORT/|" > "$WORK/urls.txt"

# `load --summary-only --json` prints one JSON object per pass, one per line.
rate() { python3 -c "import json,sys; d=[json.loads(l) for l in open(sys.argv[1])]; print(d[int(sys.argv[2])]['imagesPerSecond'])" "$@"; }
check() {
    python3 - "$@" <<'PY'
import json, sys
for p in (json.loads(line) for line in open(sys.argv[1])):
    if p["failed"]:
        sys.exit(f"pass {p['pass']}: {p['failed']} loads failed")
PY
}

echo "files=$FILES (~${average_kb} KB, 800x600 JPEG) concurrency=$CONCURRENCY rounds=$ROUNDS cores=$(nproc) nginx=127.0.0.1:$PORT"
best_decode=0; best_keep=0; best_cold=0; best_disk=0; best_memory=0
for round in $(seq 1 "$ROUNDS"); do
    # A new directory each round, all removed at exit: deleting a thousand files right before a
    # cold run makes ext4 (without a journal, as on this VM) scan its recently deleted inodes on
    # every file creation, which measured as 15% of the cold run's CPU: an artifact, not a cold start.
    cache="$WORK/cache-$round"
    decode=$("$WEBIMAGE_BIN" bench-decode-files "$WORK/files.txt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["imagesPerSecond"])')
    keep=$("$WEBIMAGE_BIN" bench-decode-files --keep "$WORK/files.txt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["imagesPerSecond"])')
    "$WEBIMAGE_BIN" load --urls-file "$WORK/urls.txt" --cache-dir "$cache" --concurrency "$CONCURRENCY" \
        --summary-only --json > "$WORK/cold.json"
    check "$WORK/cold.json"
    "$WEBIMAGE_BIN" load --urls-file "$WORK/urls.txt" --cache-dir "$cache" --concurrency "$CONCURRENCY" \
        --summary-only --json > "$WORK/disk.json"
    check "$WORK/disk.json"
    "$WEBIMAGE_BIN" load --urls-file "$WORK/urls.txt" --cache-dir "$cache" --concurrency "$CONCURRENCY" \
        --passes 2 --memory-limit 4096 --summary-only --json > "$WORK/memory.json"
    check "$WORK/memory.json"
    cold=$(rate "$WORK/cold.json" 0); disk=$(rate "$WORK/disk.json" 0); memory=$(rate "$WORK/memory.json" 1)
    echo "round $round: decode-only $decode/s (keeping images $keep/s), cold $cold/s, warm disk $disk/s, warm memory $memory/s" \
        "(this round's ratios: cold $(python3 -c "print(f'{$cold/$decode:.2f}')"), warm disk $(python3 -c "print(f'{$disk/$decode:.2f}')"))"
    round_cold_ratios="${round_cold_ratios:-} $(python3 -c "print($cold/$decode)")"
    round_disk_ratios="${round_disk_ratios:-} $(python3 -c "print($disk/$decode)")"
    best_decode=$(python3 -c "print(max($decode, $best_decode))")
    best_keep=$(python3 -c "print(max($keep, $best_keep))")
    best_cold=$(python3 -c "print(max($cold, $best_cold))")
    best_disk=$(python3 -c "print(max($disk, $best_disk))")
    best_memory=$(python3 -c "print(max($memory, $best_memory))")
done
python3 - "$best_decode" "$best_keep" "$best_cold" "$best_disk" "$best_memory" <<'PY'
import sys
decode, keep, cold, disk, memory = map(float, sys.argv[1:])
print(f"best images/s: decode-only {decode:.1f} (keeping images {keep:.1f}), cold {cold:.1f}, warm disk {disk:.1f}, warm memory {memory:.1f}")
print(f"ratio to decode-only: cold {cold / decode:.2f} (goal >= 0.80), warm disk {disk / decode:.2f} (goal >= 0.90)")
print(f"ratio to decode-only keeping images: cold {cold / keep:.2f}, warm disk {disk / keep:.2f}")
PY
# This VM's speed drifts between runs (the decode-only baseline alone moved 790-1000/s in one
# run), so the ratio within each round, whose runs are seconds apart, is the steadier measure.
python3 - "$round_cold_ratios" "$round_disk_ratios" <<'PY'
import statistics, sys
cold, disk = ([float(x) for x in arg.split()] for arg in sys.argv[1:])
print(f"median of per-round ratios: cold {statistics.median(cold):.2f}, warm disk {statistics.median(disk):.2f}")
PY
