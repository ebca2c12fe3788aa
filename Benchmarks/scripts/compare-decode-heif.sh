#!/usr/bin/env bash
# 256-px thumbnails of a 12-megapixel AVIF and HEIC: webimage vs vipsthumbnail (libvips decodes
# both through libheif). Goal: no slower (>= 1.0x). One process per thumbnail on both sides, as a
# thumbnail server's worker would run either; the in-process decode time is printed beside it.
# HEIC thumbnails of at most half the size are made from libheif's YCbCr 4:2:0 planes, each 2x2
# luma block and its chroma sample one RGBA pixel (HEIFHalfSizeDecode): no full-size RGBA image
# (libheif's conversion, 48 MB of fresh pages, our copy of it) and a resample of a quarter the
# pixels. The HEVC decode itself (libde265, one thread in libheif 1.15's plugin) is ~70% of both
# sides' time. Measured 2026-11-25 on a VM at load 3-17 on two cores: before (02:47) HEIC 1.00x,
# AVIF 2.00x; after (04:05, a build running beside it) HEIC 1.03x (7545 vs 7752 ms/process); at
# 04:21 (load 10) HEIC 1.04x (3928 vs 4100 ms/process), AVIF 1.66x (885 vs 1471, AVIF unchanged).
# Usage: Benchmarks/scripts/compare-decode-heif.sh [ITERATIONS]   (env ROUNDS=N alternating rounds, default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
iterations="${1:-10}"
source Benchmarks/scripts/decode-fixture.sh
# The test picture, encoded by the libraries' own tools.
avifenc --speed 8 --min 20 --max 30 --jobs 2 "$work/photo.png" "$work/photo.avif" >/dev/null
heif-enc -q 80 -o "$work/photo.heic" "$work/photo.png" >/dev/null

json() { python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }
per_process_ms() { # command... : mean wall time of one run, in ms
    local start; start=$(date +%s.%N)
    for _ in $(seq "$iterations"); do "$@" >/dev/null 2>&1; done
    python3 -c "print(($(date +%s.%N) - $start) / $iterations * 1000)"
}
for format in avif heic; do
    file="$work/photo.$format"
    echo "== 256-px thumbnail of a 12 MP ${format^^} ($(du -k "$file" | cut -f1) KB)"
    "$webimage" decode --max-pixel-size 256 "$file"
    vipsthumbnail "$file" --size 256 -o "$work/check.png" || { echo "vipsthumbnail cannot read $format here; skipped"; continue; }
    # Alternating rounds (ROUNDS, default 2), the best of each side (this VM's speed drifts within a minute).
    ours=(); vips=()
    for round in $(seq "${ROUNDS:-2}"); do
        ours+=("$(per_process_ms "$webimage" decode --max-pixel-size 256 "$file")")
        vips+=("$(per_process_ms vipsthumbnail "$file" --size 256 -o "$work/thumb.png")")
        printf 'round %d: webimage %.1f ms/process, vipsthumbnail %.1f ms/process\n' "$round" "${ours[-1]}" "${vips[-1]}"
    done
    best_ours=$(python3 -c "print(min(map(float, '${ours[*]}'.split())))")
    best_vips=$(python3 -c "print(min(map(float, '${vips[*]}'.split())))")
    inproc=$("$webimage" bench-decode "$file" --iterations "$iterations" --max-pixel-size 256 | json msPerDecode)
    printf 'webimage: %.1f ms/process (%.1f ms in-process decode); vipsthumbnail: %.1f ms/process\n' "$best_ours" "$inproc" "$best_vips"
    python3 -c "print('${format^^} thumbnail speed vs vipsthumbnail: %.2fx (goal >= 1.0x)' % ($best_vips / $best_ours))"
done
