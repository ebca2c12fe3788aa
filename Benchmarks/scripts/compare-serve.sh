#!/usr/bin/env bash
# `webimage serve` against thumbor 7.8 (PIL engine, no storage, tuned for throughput as its users
# run it: one process per core, each on its own port, ENGINE_THREADPOOL_SIZE = 1, wrk's connections
# spread over them) and nginx's
# image_filter, on the same origin (a local nginx serving static files) and the same 12 MP and 1 MP
# JPEG sources: 300x300 `cover` thumbnails as JPEG quality 80, driven by wrk at 8 connections.
# Every request names a distinct source URL (a query-string cache buster on the origin URL), so no
# output or source cache helps any side: each request is a fetch, a decode, a resize and an encode.
# Also: the service against the same decode+resize+encode in one process without HTTP
# (`webimage bench-render`, the service's renderer on as many threads as cores), and the service's
# peak RSS under 64 concurrent connections.
# Prints req/s and p99 for each, the ratios against the goals of issues #21 and #30, and where the
# CPU goes per `serve` request (the service, the origin, the rest) with the ratio a service costing
# nothing but its render could reach beside them on the same cores.
#
# Usage: Benchmarks/scripts/compare-serve.sh [--rounds N]
# Env:   DURATION=20s (each wrk run)  WEBIMAGE_BIN=path/to/webimage (default: builds it)
#        DISK=1 (serve with --cache-dir, a new directory per start)
#        SERVE_ARGS="..." extra `webimage serve` flags
#        THUMBOR_VENV=dir (default .build/thumbor-venv; made with pip when missing)
#        BASELINE_BIN=path/to/older/webimage: a second service from that binary, measured as
#          `serve_before` right after `serve` in every round (the same sources, flags and cores:
#          before and after a change in alternating rounds), with its CPU split
#        CONTENDERS="serve serve_before ...": only these (the goals' summary is then skipped)
set -euo pipefail

ROUNDS=1
DURATION="${DURATION:-20s}"
CONNECTIONS=8
cd "$(dirname "$0")/../.."
scripts/install-deps.sh --bench
source Benchmarks/scripts/bench-fixture.sh

pids=()
cleanup_more() {
    # thumbor's --processes forks workers that outlive their parent unless they are stopped too.
    for pid in "${pids[@]}"; do pkill -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}
bench_work serve-bench

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# Waits until `url` answers (the servers here print nothing reliable when ready).
wait_for() {
    for _ in $(seq 1 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
    echo "no answer from $1" >&2; return 1
}

# The sources: the benchmarks' 12 MP picture and the same picture at 1 MP, both JPEG quality 90.
make_sources "$WORK/www"
start_nginx
ORIGIN="127.0.0.1:$PORT"

# thumbor 7.8 from PyPI in a virtualenv under .build.
THUMBOR_VENV="${THUMBOR_VENV:-$ROOT/.build/thumbor-venv}"
if [[ ! -x "$THUMBOR_VENV/bin/thumbor" ]]; then
    /usr/bin/python3 -m venv "$THUMBOR_VENV"
    "$THUMBOR_VENV/bin/pip" install -q thumbor==7.8.0 >&2
fi
cat > "$WORK/thumbor.conf" <<'CONF'
ENGINE = 'thumbor.engines.pil'
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = 'thumbor.result_storages.no_storage'
ALLOW_UNSAFE_URL = True
QUALITY = 80
AUTO_WEBP = False
ENGINE_THREADPOOL_SIZE = 1
CONF
# One single-threaded thumbor per core, each on its own port (thumbor's deployment guide puts them
# behind a balancer; here each wrk process drives one, so no balancer costs either side anything).
# (Issue #30 measured `--processes N` on one port, what this script ran before, at 3.7 req/s against
# 9.6 this way at 12 MP.)
THUMBOR_PORTS=()
for _ in $(seq 1 "$(nproc)"); do
    port=$(free_port)
    "$THUMBOR_VENV/bin/thumbor" --ip 127.0.0.1 --port "$port" --conf "$WORK/thumbor.conf" -l error \
        > "$WORK/thumbor-$port.log" 2>&1 &
    pids+=($!)
    THUMBOR_PORTS+=("$port")
done
THUMBOR_PORT=${THUMBOR_PORTS[0]}

# nginx image_filter: a second nginx (2 workers, as the origin has) proxying to the origin.
FILTER_PORT=$(free_port)
mkdir -p "$WORK/filter/logs" "$WORK/filter/tmp"
chmod -R a+rwX "$WORK/filter"
cat > "$WORK/filter/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_http_image_filter_module.so;
daemon off;
worker_processes 2;
pid $WORK/filter/logs/nginx.pid;
error_log $WORK/filter/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $WORK/filter/tmp/body;
    proxy_temp_path $WORK/filter/tmp/proxy;
    fastcgi_temp_path $WORK/filter/tmp/fastcgi;
    uwsgi_temp_path $WORK/filter/tmp/uwsgi;
    scgi_temp_path $WORK/filter/tmp/scgi;
    upstream origin { server $ORIGIN; keepalive 16; }
    server {
        listen 127.0.0.1:$FILTER_PORT;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            image_filter crop 300 300;
            image_filter_jpeg_quality 80;
            image_filter_buffer 64M;
        }
    }
}
CONF
nginx -c "$WORK/filter/nginx.conf" -p "$WORK/filter" -e "$WORK/filter/logs/error.log" &
pids+=($!)

# webimage serve, allowed to fetch from the origin, with its memory caches only: thumbor runs
# with no storage and no result storage, so neither side writes a file per request. DISK=1 adds
# the disk tier (`--cache-dir`), a new directory per `serve` start, so no file left by an earlier
# run is found and none deleted lately is near: this VM's root ext4 has no journal, and such a
# file system skips inodes freed in the last 60-300 s when it allocates one, at a cost per inode
# skipped (6,000 file creations took 0.31 s in a new directory and 1.7-2.0 s right after the
# same directory's files were removed). SERVE_ARGS adds any other flags.
serve_instance=0
start_serve() {
    serve_instance=$((serve_instance + 1))
    SERVE_PORT=$(free_port)
    # shellcheck disable=SC2086
    local disk=()
    if [[ "${DISK:-0}" == 1 ]]; then disk=(--cache-dir "$WORK/cache-$serve_instance"); fi
    "$WEBIMAGE_BIN" serve --host 127.0.0.1 --port "$SERVE_PORT" --allow-private-source "$ORIGIN" "${disk[@]}" ${SERVE_ARGS:-} \
        "$@" > "$WORK/serve-$serve_instance.log" 2>&1 &
    SERVE_PID=$!
    pids+=("$SERVE_PID")
    wait_for "http://127.0.0.1:$SERVE_PORT/healthz"
}
# thumbor's URLs mounted beside /image (issue #45): the same render through the dialect's parser.
if [[ -n "${BASELINE_BIN:-}" ]]; then
    # The older binary first, so that SERVE_PORT and SERVE_PID name the one under test.
    real_bin=$WEBIMAGE_BIN; WEBIMAGE_BIN=$BASELINE_BIN
    start_serve --dialect thumbor=/thumbor
    BASELINE_PORT=$SERVE_PORT; BASELINE_PID=$SERVE_PID; WEBIMAGE_BIN=$real_bin
fi
start_serve --dialect thumbor=/thumbor

urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
# Each contender's URL for one source, with {n} where the cache buster goes.
url_for() {  # contender source
    case "$1" in
        serve) echo "http://127.0.0.1:$SERVE_PORT/image?url=$(urlencode "http://$ORIGIN/$2")%3Fn%3D{n}&w=300&h=300&fit=cover&format=jpeg&q=80" ;;
        serve_before) url_for serve "$2" | sed "s|:$SERVE_PORT/|:$BASELINE_PORT/|" ;;
        # The same thumbnail with issue #33's costlier options: what each adds per request.
        serve_smart) echo "$(url_for serve "$2")&gravity=smart" ;;
        serve_sharpen) echo "$(url_for serve "$2")&sharpen=1" ;;
        # What the service costs without a render: an answer from its memory cache (one URL), and
        # `/info` of a new source (the request, the fetch, the header read, the answer).
        serve_hit) url_for serve "$2" | sed 's/{n}/hit/' ;;
        serve_info) echo "http://127.0.0.1:$SERVE_PORT/info?url=$(urlencode "http://$ORIGIN/$2")%3Fn%3D{n}" ;;
        # thumbor's own URL, answered by the service's thumbor dialect.
        serve_thumbor) echo "http://127.0.0.1:$SERVE_PORT/thumbor/unsafe/300x300/filters:quality(80):format(jpeg)/$ORIGIN/$2%3Fn%3D{n}" ;;
        thumbor) echo "http://127.0.0.1:$THUMBOR_PORT/unsafe/300x300/filters:quality(80):format(jpeg)/$ORIGIN/$2%3Fn%3D{n}" ;;
        image_filter) echo "http://127.0.0.1:$FILTER_PORT/$2?n={n}" ;;
    esac
}
for contender in serve thumbor image_filter; do wait_for "$(url_for "$contender" 1mp.jpg | sed 's/{n}/warmup/')"; done
for port in "${THUMBOR_PORTS[@]}"; do wait_for "$(url_for thumbor 1mp.jpg | sed "s/{n}/warmup/; s|:$THUMBOR_PORT/|:$port/|")"; done

# Every contender's answer is a 300x300 JPEG.
for contender in serve serve_thumbor serve_smart serve_sharpen thumbor image_filter; do
    curl -sf -o "$WORK/check.jpg" "$(url_for "$contender" 12mp.jpg | sed 's/{n}/check/')"
    python3 - "$WORK/check.jpg" "$contender" <<'PY'
import sys
from PIL import Image
image = Image.open(sys.argv[1])
if image.format != "JPEG" or image.size != (300, 300):
    sys.exit(f"{sys.argv[2]}: {image.format} {image.size}, not a 300x300 JPEG")
PY
done

# wrk with a distinct {n} per request (thread number and counter) and a one-line JSON summary.
cat > "$WORK/bust.lua" <<'LUA'
local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("tid", threads)
end
local counter = 0
local template = os.getenv("WRK_TEMPLATE")
function request()
    counter = counter + 1
    local path = string.gsub(template, "{n}", tostring(tid) .. "x" .. tostring(counter) .. "x" .. tostring(os.time()))
    return wrk.format("GET", path)
end
function done(summary, latency, requests)
    local seconds = summary.duration / 1e6
    local failed = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format('{"rps": %.2f, "p99_ms": %.1f, "p50_ms": %.1f, "requests": %d, "failed": %d}\n',
        summary.requests / seconds, latency:percentile(99) / 1000, latency:percentile(50) / 1000, summary.requests, failed))
end
LUA
# Runs wrk against `url` (path and query after the host) at `connections`; prints the JSON line.
run_wrk() {  # url connections duration
    local url="$1" base path
    base="$(echo "$url" | sed -E 's|^(http://[^/]+).*|\1|')"
    path="${url#"$base"}"
    # wrk needs a connection per thread (thumbor's share of the connections may be one).
    WRK_TEMPLATE="$path" wrk -t "$(( $2 < 2 ? $2 : 2 ))" -c "$2" -d "$3" --timeout 30s --latency -s "$WORK/bust.lua" "$base" | tail -1
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
# One contender's run: thumbor's connections are spread over its processes, one wrk each at once,
# their rates added and the worst p99 kept; the others get one wrk.
run_contender() {  # contender source connections duration
    if [[ "$1" != thumbor ]]; then run_wrk "$(url_for "$1" "$2")" "$3" "$4"; return; fi
    local each=$(( ($3 + ${#THUMBOR_PORTS[@]} - 1) / ${#THUMBOR_PORTS[@]} )) outputs=() runs=() port run
    for port in "${THUMBOR_PORTS[@]}"; do
        outputs+=("$WORK/wrk-$port.json")
        run_wrk "$(url_for thumbor "$2" | sed "s|:$THUMBOR_PORT/|:$port/|")" "$each" "$4" > "$WORK/wrk-$port.json" &
        runs+=($!)
    done
    for run in "${runs[@]}"; do wait "$run"; done
    python3 - "${outputs[@]}" <<'PY'
import json, sys
runs = [json.loads(open(p).read()) for p in sys.argv[1:]]
print(json.dumps({"rps": sum(r["rps"] for r in runs), "p99_ms": max(r["p99_ms"] for r in runs),
                  "p50_ms": max(r["p50_ms"] for r in runs), "requests": sum(r["requests"] for r in runs),
                  "failed": sum(r["failed"] for r in runs)}))
PY
}

# Where the machine's CPU goes while the service runs (issue #30): clock ticks of processes (threads
# included) and of the whole machine (everything but idle and I/O wait), both in USER_HZ.
cpu_ticks() {  # pid...
    local total=0 pid ticks
    for pid in "$@"; do
        ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || ticks=0
        total=$((total + ${ticks:-0}))
    done
    echo "$total"
}
machine_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
HZ=$(getconf CLK_TCK)

echo "cores=$(nproc) connections=$CONNECTIONS duration=$DURATION rounds=$ROUNDS origin=nginx@$ORIGIN"
echo "note: this machine is shared (2 cores, other jobs running): numbers move between runs; ratios within a round are steadier."
declare -A best_rps best_p99 serve_cpu
for round in $(seq 1 "$ROUNDS"); do
    for source in 12mp.jpg 1mp.jpg; do
        all="serve serve_thumbor serve_smart serve_sharpen serve_hit serve_info thumbor image_filter"
        [[ -n "${BASELINE_BIN:-}" ]] && all="${all/serve /serve serve_before }"
        for contender in ${CONTENDERS:-$all}; do
            run_contender "$contender" "$source" 2 3s > /dev/null   # warm connections and code paths
            origin_workers=$(pgrep -P "$NGINX_PID" | tr '\n' ' ')
            # shellcheck disable=SC2086
            measured=$SERVE_PID; [[ "$contender" == serve_before ]] && measured=$BASELINE_PID
            cpu_before=("$(cpu_ticks "$measured")" "$(cpu_ticks $origin_workers)" "$(machine_ticks)")
            result=$(run_contender "$contender" "$source" "$CONNECTIONS" "$DURATION")
            # shellcheck disable=SC2086
            cpu_after=("$(cpu_ticks "$measured")" "$(cpu_ticks $origin_workers)" "$(machine_ticks)")
            rps=$(field "$result" rps); p99=$(field "$result" p99_ms); failed=$(field "$result" failed)
            printf 'round %d %-8s %-12s %8.1f req/s  p50 %7.1f ms  p99 %7.1f ms  failed %s\n' \
                "$round" "${source%.jpg}" "$contender" "$rps" "$(field "$result" p50_ms)" "$p99" "$failed"
            if [[ "$contender" == serve* ]]; then
                # CPU ms per request: the service, the origin's workers, and the rest (wrk, the
                # kernel's loopback traffic and disk writeback, anything else running).
                serve_cpu[$contender/$source]=$(python3 -c "
b, a, n, hz = [$(IFS=,; echo "${cpu_before[*]}")], [$(IFS=,; echo "${cpu_after[*]}")], $(field "$result" requests), $HZ
d = [(y - x) * 1000 / hz / max(n, 1) for x, y in zip(b, a)]
print(f'{d[0]:.2f} {d[1]:.2f} {d[2] - d[0] - d[1]:.2f}')")
            fi
            key="$contender/$source"
            if [[ -z "${best_rps[$key]:-}" ]] || python3 -c "import sys; sys.exit(0 if $rps > ${best_rps[$key]} else 1)"; then
                best_rps[$key]=$rps; best_p99[$key]=$p99
            fi
        done
        # The same renders in one process, no HTTP and no fetch: the service's ceiling.
        /usr/bin/time -f "%U %S" -o "$WORK/render.time" "$WEBIMAGE_BIN" bench-render "$WORK/www/$source" \
            --query "w=300&h=300&fit=cover&format=jpeg&q=80" --seconds "${DURATION%s}" > "$WORK/render.json"
        render=$(< "$WORK/render.json")
        cli=$(field "$render" imagesPerSecond)
        render_ms=$(cpu_ms_per_image "$WORK/render.time" "$(field "$render" images)")
        printf 'round %d %-8s %-12s %8.1f images/s (webimage bench-render, %d threads), %.2f ms CPU per image\n' \
            "$round" "${source%.jpg}" "cli" "$cli" "$(nproc)" "$render_ms"
        # What the service's rate could be at most beside the origin and wrk on the same cores: a
        # service costing nothing but the render would make its requests at render + origin + rest;
        # one that also pays what `/info` of a new source costs it (the request, the fetch, the
        # answer), at that much more.
        if [[ -n "${BASELINE_BIN:-}" ]]; then
            read -r own origin rest <<< "${serve_cpu[serve/$source]}"
            read -r before_own _ _ <<< "${serve_cpu[serve_before/$source]}"
            python3 -c "print(f'round $round ${source%.jpg}   before/after: the service {$before_own:.2f} -> {$own:.2f} ms CPU a request,'
      f' around the render {$before_own - $render_ms:.2f} -> {$own - $render_ms:.2f} ms')"
        fi
        key="cli/$source"
        if [[ -z "${best_rps[$key]:-}" ]] || python3 -c "import sys; sys.exit(0 if $cli > ${best_rps[$key]} else 1)"; then best_rps[$key]=$cli; fi
        [[ -n "${CONTENDERS:-}" ]] && continue
        read -r own origin rest <<< "${serve_cpu[serve/$source]}"
        read -r hit _ _ <<< "${serve_cpu[serve_hit/$source]}"
        read -r info _ _ <<< "${serve_cpu[serve_info/$source]}"
        python3 -c "
own, origin, rest, render, hit, info = $own, $origin, $rest, $render_ms, $hit, $info
print(f'round $round ${source%.jpg}   CPU per serve request: the service {own:.2f} ms (render {render:.2f} + {own - render:.2f} around it), origin nginx {origin:.2f}, wrk and the rest {rest:.2f}')
print(f'round $round ${source%.jpg}   the service without a render: a memory-cache answer {hit:.2f} ms, /info of a new source {info:.2f} ms')
print(f'round $round ${source%.jpg}   bound on serve/bench-render here: {render / (render + origin + rest):.2f} for a service costing only its render,'
      f' {render / (render + info + origin + rest):.2f} for one costing its render and a fetch as /info does')"
    done
done

if [[ -n "${BASELINE_BIN:-}" ]]; then
    for source in 12mp.jpg 1mp.jpg; do
        python3 -c "
a, b, c = ${best_rps[serve/$source]}, ${best_rps[serve_before/$source]}, ${best_rps[cli/$source]}
print(f'best of rounds, ${source%.jpg}: serve {a:.1f} req/s, before {b:.1f} ({a / b:.2f}x); serve/bench-render {a / c:.2f} (before {b / c:.2f})')"
    done
fi
if [[ -n "${CONTENDERS:-}" ]]; then exit 0; fi
# Peak RSS under 64 connections: a fresh instance, the 12 MP source (the largest decodes).
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true
start_serve
rss_result=$(run_wrk "$(url_for serve 12mp.jpg)" 64 "$DURATION")
peak_kb=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_PID/status")
echo "64 connections, 12 MP: $(field "$rss_result" rps) req/s, p99 $(field "$rss_result" p99_ms) ms, non-2xx/failed $(field "$rss_result" failed) (503s are the --concurrency backpressure)"
grep -iE "concurrency|budget|memory" "$WORK/serve-$serve_instance.log" | head -5 || true

python3 - "$peak_kb" \
    "${best_rps[serve/12mp.jpg]}" "${best_p99[serve/12mp.jpg]}" "${best_rps[serve/1mp.jpg]}" "${best_p99[serve/1mp.jpg]}" \
    "${best_rps[thumbor/12mp.jpg]}" "${best_p99[thumbor/12mp.jpg]}" "${best_rps[thumbor/1mp.jpg]}" "${best_p99[thumbor/1mp.jpg]}" \
    "${best_rps[image_filter/12mp.jpg]}" "${best_rps[image_filter/1mp.jpg]}" "${best_rps[cli/12mp.jpg]}" "${best_rps[cli/1mp.jpg]}" \
    "${best_rps[serve_smart/12mp.jpg]}" "${best_rps[serve_smart/1mp.jpg]}" "${best_rps[serve_sharpen/12mp.jpg]}" "${best_rps[serve_sharpen/1mp.jpg]}" \
    "${best_rps[serve_thumbor/12mp.jpg]}" "${best_rps[serve_thumbor/1mp.jpg]}" <<'PY'
import sys
peak_kb = int(sys.argv[1])
s12, s12p99, s1, s1p99, t12, t12p99, t1, t1p99, f12, f1, c12, c1, m12, m1, h12, h1, d12, d1 = map(float, sys.argv[2:])
def verdict(ok): return "met" if ok else "NOT met"
print("best of rounds (req/s, p99 ms):")
print(f"  12 MP: serve {s12:.1f} ({s12p99:.0f} ms)  thumbor {t12:.1f} ({t12p99:.0f} ms)  image_filter {f12:.1f}  cli {c12:.1f}")
print(f"   1 MP: serve {s1:.1f} ({s1p99:.0f} ms)  thumbor {t1:.1f} ({t1p99:.0f} ms)  image_filter {f1:.1f}  cli {c1:.1f}")
print("goals (issue #21):")
print(f"  vs thumbor 12 MP: {s12 / t12:.1f}x (goal >= 10x: {verdict(s12 >= 10 * t12)}), p99 {s12p99:.0f} vs {t12p99:.0f} ms ({verdict(s12p99 <= t12p99)})")
print(f"  vs thumbor  1 MP: {s1 / t1:.1f}x (goal >= 3x: {verdict(s1 >= 3 * t1)}), p99 {s1p99:.0f} vs {t1p99:.0f} ms ({verdict(s1p99 <= t1p99)})")
print(f"  vs image_filter: 12 MP {s12 / f12:.1f}x, 1 MP {s1 / f1:.1f}x (goal >= 2x: {verdict(s12 >= 2 * f12 and s1 >= 2 * f1)})")
print(f"  vs the same renders without HTTP: 12 MP {s12 / c12:.2f}, 1 MP {s1 / c1:.2f} (goal >= 0.8: {verdict(s12 >= 0.8 * c12 and s1 >= 0.8 * c1)};"
      f" issue #30's goal >= 0.9: {verdict(s12 >= 0.9 * c12 and s1 >= 0.9 * c1)})")
print(f"  issue #42 (with DISK=1): vs thumbor 12 MP {s12 / t12:.1f}x (goal >= 8x: {verdict(s12 >= 8 * t12)}),"
      f" serve/bench-render 12 MP {s12 / c12:.2f} (goal >= 0.9: {verdict(s12 >= 0.9 * c12)})")
print(f"  issue #45: thumbor's URL through --dialect thumbor vs /image: 12 MP {d12:.1f} vs {s12:.1f} req/s ({d12 / s12:.2f}),"
      f" 1 MP {d1:.1f} vs {s1:.1f} ({d1 / s1:.2f}); vs thumbor itself 12 MP {d12 / t12:.1f}x, 1 MP {d1 / t1:.1f}x")
print(f"  peak RSS under 64 connections (12 MP): {peak_kb / 1024:.0f} MiB")
# Per request on the cores the service used: the rate's reciprocal times the cores, as CPU time.
import os
cores = os.cpu_count() or 1
def cost(option, base): return (1 / option - 1 / base) * cores * 1000
print("what issue #33's options cost per request (CPU ms, from the rates):")
print(f"  gravity=smart: 12 MP {m12:.1f} req/s (+{cost(m12, s12):.1f} ms), 1 MP {m1:.1f} req/s (+{cost(m1, s1):.1f} ms)")
print(f"  sharpen=1:     12 MP {h12:.1f} req/s (+{cost(h12, s12):.1f} ms), 1 MP {h1:.1f} req/s (+{cost(h1, s1):.1f} ms)")
PY
