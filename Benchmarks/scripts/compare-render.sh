#!/usr/bin/env bash
# The service's render engine (`webimage bench-render`: decode + 300x300 `cover` + JPEG q80, no
# HTTP, one render per core) against libvips 8.18 and Pillow doing the same work, on the same 12 MP
# and 1 MP JPEG sources (make-photo.py's picture, quality 90). Issue #42's goal: at least 2x libvips
# at both sizes.
#
# Each anchor runs as its own users tune it for throughput:
#   libvips  pyvips + pyvips-binary 8.18 (PyPI) in a virtualenv; one process per core, each with
#            VIPS_CONCURRENCY=1 and the operation cache off (`cache_set_max(0)`: a server renders
#            distinct sources, and a cache hit would skip the work); `thumbnail_buffer(data, 300,
#            height=300, crop="centre")` (shrink-on-load: libjpeg's DCT scaling) then
#            `jpegsave_buffer(Q=80)`.
#   Pillow   Debian's Pillow, one process per core; `draft("RGB", ...)` (libjpeg's DCT scaling to
#            at least the size that covers 300x300), `ImageOps.fit(..., LANCZOS)` then
#            `save(JPEG, quality=80)`, as thumbor's PIL engine and most Pillow thumbnailers do.
# Each side renders the source bytes (already in memory) over and over for DURATION seconds;
# rounds alternate webimage, libvips, Pillow, and the best of each side is kept (this VM's speed
# drifts 10-30% between runs).
#
# Usage: Benchmarks/scripts/compare-render.sh [--rounds N]
# Env:   DURATION=10 (seconds per side per round)  WEBIMAGE_BIN=path/to/webimage (default: builds it)
#        VIPS_VENV=dir (default .build/vips-venv; made with pip when missing)
set -euo pipefail

ROUNDS=3
DURATION="${DURATION:-10}"
cd "$(dirname "$0")/../.."
scripts/install-deps.sh --bench
source Benchmarks/scripts/bench-fixture.sh
bench_work render-bench
cores=$(nproc)

VIPS_VENV="${VIPS_VENV:-$ROOT/.build/vips-venv}"
if [[ ! -x "$VIPS_VENV/bin/python" ]] || ! "$VIPS_VENV/bin/python" -c 'import pyvips' 2>/dev/null; then
    /usr/bin/python3 -m venv "$VIPS_VENV"
    "$VIPS_VENV/bin/pip" install -q pyvips pyvips-binary==8.18.7 >&2
fi

make_sources "$WORK"

# One renderer process: renders FILE for DURATION seconds, prints the count. ENGINE is vips or pil.
cat > "$WORK/render.py" <<'PY'
import os, sys, time
engine, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = open(path, "rb").read()
if engine == "vips":
    import pyvips
    pyvips.cache_set_max(0)
    def render():
        return pyvips.Image.thumbnail_buffer(data, 300, height=300, crop="centre").jpegsave_buffer(Q=80)
    print(f"libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}", file=sys.stderr)
else:
    import io
    from PIL import Image, ImageOps
    def render():
        image = Image.open(io.BytesIO(data))
        scale = max(300 / image.width, 300 / image.height)
        image.draft("RGB", (int(image.width * scale) + 1, int(image.height * scale) + 1))
        out = io.BytesIO()
        ImageOps.fit(image.convert("RGB"), (300, 300), Image.LANCZOS).save(out, "JPEG", quality=80)
        return out.getvalue()
render()  # warm: library loading and first allocations out of the timing
count, deadline = 0, time.monotonic() + seconds
while time.monotonic() < deadline:
    render()
    count += 1
print(count)
PY

# anchor ENGINE FILE: images/s of one process per core, each rendering FILE for DURATION seconds.
anchor() {
    local engine=$1 file=$2 python=/usr/bin/python3 pids=() total=0
    [[ $engine == vips ]] && python="$VIPS_VENV/bin/python"
    for index in $(seq 1 "$cores"); do
        VIPS_CONCURRENCY=1 "$python" "$WORK/render.py" "$engine" "$file" "$DURATION" > "$WORK/$engine-$index.out" 2>>"$WORK/$engine.log" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    for index in $(seq 1 "$cores"); do total=$((total + $(< "$WORK/$engine-$index.out"))); done
    python3 -c "print(round($total / $DURATION, 2))"
}
ours() {
    "$WEBIMAGE_BIN" bench-render "$1" --query "w=300&h=300&fit=cover&format=jpeg&q=80" --seconds "$DURATION" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["imagesPerSecond"])'
}

echo "machine: $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ), $DURATION s per side, $ROUNDS rounds"
declare -A best
for round in $(seq 1 "$ROUNDS"); do
    for source in 12mp 1mp; do
        file="$WORK/$source.jpg"
        w=$(ours "$file"); v=$(anchor vips "$file"); p=$(anchor pil "$file")
        printf 'round %d %-5s webimage %7.1f  libvips %7.1f  Pillow %7.1f images/s  (%.2fx libvips, %.2fx Pillow)\n' \
            "$round" "$source" "$w" "$v" "$p" "$(python3 -c "print($w / $v)")" "$(python3 -c "print($w / $p)")"
        for side in "webimage $w" "vips $v" "pil $p"; do
            read -r name value <<< "$side"
            key="$name/$source"
            if [[ -z "${best[$key]:-}" ]] || python3 -c "import sys; sys.exit(0 if $value > ${best[$key]} else 1)"; then best[$key]=$value; fi
        done
    done
done
grep -o "libvips [0-9.]*[0-9]" "$WORK/vips.log" | head -1
for source in 12mp 1mp; do
    w=${best[webimage/$source]} v=${best[vips/$source]} p=${best[pil/$source]}
    python3 -c "print(f'best {\"$source\":5} webimage $w, libvips $v, Pillow $p images/s: {$w / $v:.2f}x libvips (goal >= 2x), {$w / $p:.2f}x Pillow')"
done
