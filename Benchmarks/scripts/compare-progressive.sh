#!/usr/bin/env bash
# What a progressive load costs: loads one ~500 KB progressive JPEG from a local origin throttled
# to ~200 KB/s (a small Python server writing 4 KB every 20 ms; nginx's limit_rate sends a whole
# second's worth at once first, which is no slow link), once as a normal load and once with --progressive, each in a fresh
# `webimage load --json --no-cache` process, and measures each process's CPU time (user + system,
# from getrusage of the child) and wall time. Prints, per round and as medians:
#   - the CPU of the progressive load over the CPU of the normal one (the bound: <= 2),
#   - how far into the file the first partial image came (bytesReceived / size; the bound: <= 20%),
#   - whether the final images are the same (rgbaSHA256 of both records).
# Exits 1 when a median is over its bound or the images differ.
#
# Usage: Benchmarks/scripts/compare-progressive.sh [--rounds N] [--size BYTES]
# Env:   WEBIMAGE_BIN (see bench-fixture.sh); RATE (bytes per second, default 200000)
set -euo pipefail

ROUNDS=5
SIZE=500000
source "$(dirname "$0")/bench-fixture.sh"
RATE="${RATE:-200000}"

cleanup_more() {
    if [[ -n "${SERVER_PID:-}" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
}
bench_work bench
# A photo-like picture (make-photo.py's recipe) sized so its progressive JPEG is about SIZE bytes.
python3 - "$WORK/www/photo.jpg" "$SIZE" <<'PY'
import io, random, sys
from PIL import Image, ImageDraw, ImageFilter
path, target = sys.argv[1], int(sys.argv[2])
def picture(w, h):
    random.seed(1)
    im = Image.linear_gradient("L").resize((w, h)).convert("RGB")
    draw = ImageDraw.Draw(im)
    for _ in range(60):
        x, y, r = random.randrange(w), random.randrange(h), random.randrange(10, max(11, w // 8))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(random.randrange(256) for _ in range(3)))
    im = im.filter(ImageFilter.GaussianBlur(2))
    return Image.blend(im, Image.effect_noise((w, h), 24).convert("RGB"), 0.15)
def encoded(w):
    out = io.BytesIO()
    picture(w, w * 3 // 4).save(out, "JPEG", quality=90, progressive=True)
    return out.getvalue()
w = 1200
data = encoded(w)
for _ in range(4):
    w = max(64, int(w * (target / len(data)) ** 0.5))
    data = encoded(w)
open(path, "wb").write(data)
print(f"photo.jpg: {w}x{w * 3 // 4}, {len(data)} bytes, progressive", file=sys.stderr)
PY
BYTES=$(stat -c %s "$WORK/www/photo.jpg")

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
python3 - "$WORK/www" "$PORT" "$RATE" <<'PY' &
import http.server, os, sys, time
root, port, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
piece = max(1, rate // 50)
class Throttled(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        data = open(os.path.join(root, os.path.basename(self.path)), "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        start = time.monotonic()
        for n, offset in enumerate(range(0, len(data), piece)):
            self.wfile.write(data[offset:offset + piece])
            self.wfile.flush()
            # Paced from the start, so the rate holds however long each write took.
            time.sleep(max(0.0, start + (n + 1) * 0.02 - time.monotonic()))
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Throttled).serve_forever()
PY
SERVER_PID=$!
URL="http://127.0.0.1:$PORT/photo.jpg"
python3 -c "
import socket, sys, time
for _ in range(50):
    try: socket.create_connection(('127.0.0.1', $PORT), timeout=1).close(); sys.exit(0)
    except OSError: time.sleep(0.1)
sys.exit('the origin did not start')"

# Runs the command, its stdout to $1; prints "user+system wall" seconds of the child.
measure() {
    local out="$1"; shift
    python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys, time
out, command = sys.argv[1], sys.argv[2:]
start = time.monotonic()
with open(out, "wb") as f:
    subprocess.run(command, stdout=f, check=True)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{usage.ru_utime + usage.ru_stime:.4f} {wall:.3f}")
PY
}

echo "file=$BYTES bytes rate=$RATE bytes/s rounds=$ROUNDS origin=127.0.0.1:$PORT"
printf '%-6s %12s %12s %10s %12s %10s %8s\n' round normal-cpu-s progr-cpu-s cpu-ratio first-partial partials same
ratios=""; firsts=""; failed=0
for round in $(seq 1 "$ROUNDS"); do
    read -r normal_cpu normal_wall < <(measure "$WORK/normal.out" "$WEBIMAGE_BIN" load "$URL" --json --no-cache)
    read -r progressive_cpu progressive_wall < <(measure "$WORK/progressive.out" "$WEBIMAGE_BIN" load "$URL" --json --no-cache --progressive)
    read -r first partials same < <(python3 - "$WORK/normal.out" "$WORK/progressive.out" "$BYTES" <<'PY'
import json, sys
normal = [json.loads(line) for line in open(sys.argv[1])]
lines = [json.loads(line) for line in open(sys.argv[2])]
size = int(sys.argv[3])
partials = [line for line in lines if line.get("event") == "partial"]
final = lines[-1]
first = partials[0]["bytesReceived"] / size if partials else 1.0
same = final.get("rgbaSHA256") == normal[-1].get("rgbaSHA256") and final.get("status") == "ok"
print(f"{first:.4f} {len(partials)} {'yes' if same else 'NO'}")
PY
)
    ratio=$(python3 -c "print(f'{$progressive_cpu / $normal_cpu:.3f}')")
    printf '%-6s %12s %12s %10s %11.1f%% %10s %8s\n' "$round" "$normal_cpu" "$progressive_cpu" "$ratio" \
        "$(python3 -c "print($first * 100)")" "$partials" "$same"
    ratios="$ratios $ratio"; firsts="$firsts $first"
    [[ "$same" == yes ]] || failed=1
done
median() { python3 -c "import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
ratio_median=$(median $ratios)
first_median=$(median $firsts)
echo "median CPU ratio (progressive / normal): $ratio_median (bound 2)"
echo "median first partial at: $(python3 -c "print(f'{$first_median * 100:.1f}')")% of the bytes (bound 20%)"
python3 -c "import sys; sys.exit(0 if $ratio_median <= 2 and $first_median <= 0.2 else 1)" || failed=1
exit "$failed"
