#!/usr/bin/env bash
# Load held: `webimage serve --cache-dir` under wrk for a long run (10 minutes by default) on
# distinct renders (every request names a source URL never asked for before, and a width of its
# own), from an origin where a quarter of the sources fail: answering 500, cutting the body short
# of its Content-Length, or resetting the connection (a third each). Every 10 s it samples the
# service's resident memory (VmRSS, and VmHWM at the end) and open descriptors (/proc/PID/fd); at
# the end it reports the requests, wrk's count by status, the samples, and whether SIGTERM stopped
# the service cleanly (exit status 0, within the time given) with its descriptors back near the
# start.
#
# Usage: Benchmarks/scripts/soak-serve.sh
# Env:   DURATION=600 (seconds of load)  CONNECTIONS=16  THREADS=2  SAMPLE=10 (seconds between samples)
#        WEBIMAGE_BIN=path/to/webimage (default: the release product, built as the comparison
#        scripts build it)  SERVE_ARGS="..." more `webimage serve` flags
# Needs wrk (scripts/install-deps.sh --bench) and python3 (the origin; standard library only).
set -euo pipefail
DURATION="${DURATION:-600}"
CONNECTIONS="${CONNECTIONS:-16}"
THREADS="${THREADS:-2}"
SAMPLE="${SAMPLE:-10}"
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || scripts/install-deps.sh --bench
source Benchmarks/scripts/bench-fixture.sh

pids=()
cleanup_more() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; }
bench_work soak-serve
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# The origin: /img/N.png for any N, K = N / 16 (wrk's threads put their number in N's low four
# bits). K % 4 == 0 fails (by K / 4 % 3: 500, a body cut short, a reset); the others are a 640×480 PNG (the same bytes under every name: distinct URLs, so no
# cache of the service's helps).
ORIGIN_PORT="$(free_port)"
cat > "$WORK/origin.py" <<'PY'
import socket, struct, sys, zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
w, h = 640, 480
rows = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 255 // w, y * 255 // h, 128)) for y in range(h))
def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
PNG = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_GET(self):
        try: k = int(self.path.rsplit("/", 1)[-1].split(".")[0]) // 16
        except ValueError: k = 1
        if k % 4 == 0:
            kind = k // 4 % 3
            if kind == 0:
                self.send_response(500); self.send_header("Content-Length", "0"); self.end_headers(); return
            if kind == 1:
                self.send_response(200); self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG))); self.end_headers()
                self.wfile.write(PNG[: len(PNG) // 3]); self.wfile.flush()
                self.close_connection = True; return
            # A reset: SO_LINGER 0, then close, before any response.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True; return
        self.send_response(200); self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(PNG))); self.end_headers(); self.wfile.write(PNG)
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Origin).serve_forever()
PY
python3 "$WORK/origin.py" "$ORIGIN_PORT" &
pids+=($!)
for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/img/17.png" && break; sleep 0.1; done

mkdir -p "$WORK/cache"
# shellcheck disable=SC2086
"$WEBIMAGE_BIN" serve --host 127.0.0.1 --port 0 --cache-dir "$WORK/cache" \
    --allowed-source "http://127.0.0.1:$ORIGIN_PORT/img/" --allow-private-source "127.0.0.1:$ORIGIN_PORT" \
    ${SERVE_ARGS:-} >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE_PID=$!
pids+=("$SERVE_PID")
for _ in $(seq 1 300); do
    SERVE_PORT="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$WORK/serve.out")"
    [[ -n "$SERVE_PORT" ]] && break
    sleep 0.1
done
[[ -n "${SERVE_PORT:-}" ]] || { echo "webimage serve did not start" >&2; cat "$WORK/serve.err" >&2; exit 1; }
curl -sf -o /dev/null "http://127.0.0.1:$SERVE_PORT/image?url=http%3A%2F%2F127.0.0.1%3A$ORIGIN_PORT%2Fimg%2F17.png&w=32&format=jpeg" \
    || { echo "the first render failed" >&2; exit 1; }

# Every request a new source (a counter per wrk thread, the thread's number in the low digits so
# threads never collide) and a width of its own; statuses counted per thread, summed at the end.
cat > "$WORK/soak.lua" <<LUA
local threads = {}
local next_id = 0
function setup(thread)
    thread:set("tid", next_id); next_id = next_id + 1
    table.insert(threads, thread)
end
function init(args)
    counter = 0
    statuses = {}
end
function request()
    counter = counter + 1
    local n = counter * 16 + tid
    return wrk.format("GET", "/image?url=http%3A%2F%2F127.0.0.1%3A${ORIGIN_PORT}%2Fimg%2F" .. n .. ".png&w=" .. (64 + n % 512) .. "&format=jpeg")
end
function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
    local total = {}
    for _, thread in ipairs(threads) do
        for status, count in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + count end
    end
    local names = {}
    for status in pairs(total) do table.insert(names, status) end
    table.sort(names)
    for _, status in ipairs(names) do io.write(string.format("status %d: %d\n", status, total[status])) end
    io.write(string.format("requests: %d, errors: connect %d read %d write %d timeout %d, p50 %.1f ms, p99 %.1f ms\n",
        summary.requests, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
LUA

field_kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$SERVE_PID/status"; }
fds() { ls "/proc/$SERVE_PID/fd" | wc -l; }
echo "time_s rss_mib fds cache_mib" > "$WORK/samples.txt"
sample() { echo "$1 $(( $(field_kib VmRSS) / 1024 )) $(fds) $(du -sm "$WORK/cache" 2>/dev/null | cut -f1)" >> "$WORK/samples.txt"; }
start_fds="$(fds)"
sample 0
wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" --timeout 30s -s "$WORK/soak.lua" "http://127.0.0.1:$SERVE_PORT" \
    > "$WORK/wrk.txt" 2>&1 &
WRK_PID=$!
elapsed=0
while kill -0 "$WRK_PID" 2>/dev/null; do
    sleep "$SAMPLE"
    elapsed=$((elapsed + SAMPLE))
    kill -0 "$WRK_PID" 2>/dev/null && sample "$elapsed"
done
wait "$WRK_PID"
peak_mib=$(( $(field_kib VmHWM) / 1024 ))
sample "$elapsed"
end_fds="$(fds)"

# A clean SIGTERM: the service drains and exits 0.
term_start=$(date +%s.%N)
kill -TERM "$SERVE_PID"
set +e
wait "$SERVE_PID"
serve_status=$?
set -e
term_seconds=$(echo "$(date +%s.%N) - $term_start" | bc)

echo "== soak: webimage serve --cache-dir, ${DURATION} s, wrk -t$THREADS -c$CONNECTIONS, every request a new source, 1 in 4 failing at the origin"
sed -n '/^status\|^requests/p' "$WORK/wrk.txt"
grep -E "Requests/sec" "$WORK/wrk.txt" || true
echo "== samples (every ${SAMPLE} s): time_s rss_mib fds cache_mib"
sed 1d "$WORK/samples.txt"
echo "== peak RSS (VmHWM): ${peak_mib} MiB; descriptors: ${start_fds} at start, ${end_fds} after the load"
echo "== SIGTERM: exit status ${serve_status} after ${term_seconds} s; last lines of stderr:"
tail -n 3 "$WORK/serve.err"
grep -q "webimage serve: stopped" "$WORK/serve.out" && echo "stdout ends with: webimage serve: stopped"
[[ "$serve_status" -eq 0 ]]
