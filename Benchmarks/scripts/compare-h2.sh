#!/usr/bin/env bash
# HTTP/2 against HTTP/1.1 and curl over a slow link: nginx serves 200 distinct ~50 KB JPEGs over
# TLS with HTTP/2, behind latency-relay.py (a loopback TCP relay delaying each direction by
# DELAY_MS, 25 ms by default: this machine's kernel has no netem). Per round, alternating:
#   curl --http2 --parallel --parallel-max 100      (the reference; bytes to /dev/null)
#   webimage load --http-version 1.1 --concurrency 6 (6 keep-alive connections)
#   webimage load --http-version 2 --concurrency 100 (one connection, multiplexed)
#   webimage bench-download --http-version 2 --concurrency 100 (the same downloads, no decode: what curl does)
# `webimage load` downloads and decodes every image (no cache). Then, without the relay, the CPU
# (user+sys, from /usr/bin/time) each of our runs spends per image.
# Prints the best of each side over the rounds and the ratios the issue asks for:
#   h1.1 / h2 wall >= 3, curl / h2 wall >= 1.0, h2 CPU per image / h1.1 CPU per image <= 1.3.
# With AsyncHTTPClient (AHC_BIN or AHC=1; issue #30), each round then also runs AHCDownloadBench
# (the Benchmarks package) over the link and, for CPU, straight to nginx: the ImageLoader over AHC
# and ours (an HTTPImageLoader of its own) in the same harness (N workers awaiting loader
# streams), HTTP/1.1 x6 and h2 x100, and ImageManager over the AHC loader (decoding, as
# `webimage load --no-cache`), h1.1 and h2. Their lines follow; the lines above are unchanged.
# Until `webimage load` has --http-version, the h2 runs are skipped with a "needs --http-version"
# line and the HTTP/1.1 run uses the client's only protocol.
#
# Usage: Benchmarks/scripts/compare-h2.sh [--files N] [--rounds N]
# Env:   WEBIMAGE_BIN=path/to/webimage (default: builds the release product of this package)
#        DELAY_MS=25 (each way)   NGINX=nginx binary
#        AHC_BIN=path/to/AHCDownloadBench, or AHC=1 to build it (cd Benchmarks && swift build -c release
#        --product AHCDownloadBench): also run AsyncHTTPClient. Unset: the script as before.
set -euo pipefail

FILES=200
SIZE=51200
CONCURRENCY=6
ROUNDS="${ROUNDS:-3}"
DELAY_MS="${DELAY_MS:-25}"
source "$(dirname "$0")/bench-fixture.sh"
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }
curl --version | grep -q HTTP2 || { echo "this curl has no HTTP/2" >&2; exit 1; }
find_ahc

RELAY_PID=""
cleanup_more() { [[ -n "$RELAY_PID" ]] && kill "$RELAY_PID" 2>/dev/null || true; }
bench_work h2

# The fixture: FILES distinct JPEGs of about SIZE bytes (noise over a gradient, quality chosen
# per file to land near the size), so every request is a real image the loader decodes.
python3 - "$WORK/www" "$FILES" "$SIZE" <<'PY'
import io, random, sys
from PIL import Image
root, files, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(20)
base = Image.linear_gradient("L").resize((320, 240)).convert("RGB")
for n in range(files):
    noise = Image.effect_noise((320, 240), 40 + n % 7).convert("RGB")
    im = Image.blend(base, noise, 0.35)
    best = None
    for quality in range(95, 20, -5):
        out = io.BytesIO()
        im.save(out, "JPEG", quality=quality)
        best = out.getvalue()
        if len(best) <= size:
            break
    open(f"{root}/{n}.jpg", "wb").write(best)
PY

# A self-signed certificate for 127.0.0.1, trusted by both clients through --cacert / --ca-file.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

# nginx with TLS and HTTP/2: `http2 on;` from nginx 1.25.1, the `listen ... http2` flag before.
NGINX_BIN="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
version="$("$NGINX_BIN" -v 2>&1 | sed -E 's|.*nginx/([0-9.]+).*|\1|')"
if python3 -c "import sys; sys.exit(0 if tuple(map(int, '$version'.split('.'))) >= (1, 25, 1) else 1)"; then
    LISTEN_FLAGS="ssl"; H2_DIRECTIVE="http2 on;"
else
    LISTEN_FLAGS="ssl http2"; H2_DIRECTIVE=""
fi
# bench-fixture's start_nginx, with TLS and HTTP/2 on the listener and an https probe.
NGINX_LISTEN_FLAGS="$LISTEN_FLAGS"
NGINX_SERVER_EXTRA="ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem; $H2_DIRECTIVE http2_max_concurrent_streams 128;"
NGINX_PROBE_SCHEME=https
NGINX_CURL_FLAGS="--cacert $WORK/cert.pem"
NGINX="$NGINX_BIN" start_nginx

python3 "$(dirname "$0")/latency-relay.py" --listen 0 --to "127.0.0.1:$PORT" --delay-ms "$DELAY_MS" > "$WORK/relay.out" &
RELAY_PID=$!
for _ in $(seq 1 50); do [[ -s "$WORK/relay.out" ]] && break; sleep 0.1; done
RELAY_PORT="$(awk '{print $2}' "$WORK/relay.out")"
[[ -n "$RELAY_PORT" ]] || { echo "the latency relay did not start" >&2; exit 1; }

# One URL list per endpoint: through the relay (slow link) and straight to nginx (CPU runs).
make_lists() { # port name
    : > "$WORK/$2.urls"; : > "$WORK/$2.curl"
    for n in $(seq 0 $((FILES - 1))); do
        echo "https://127.0.0.1:$1/$n.jpg" >> "$WORK/$2.urls"
        printf 'url = "https://127.0.0.1:%s/%s.jpg"\noutput = "/dev/null"\n' "$1" "$n" >> "$WORK/$2.curl"
    done
}
make_lists "$RELAY_PORT" slow
make_lists "$PORT" direct

HAS_VERSION=0
# The help text is read whole first: `grep -q` stopping early would kill the writer with SIGPIPE,
# which pipefail turns into "no --http-version" now and then.
help_text="$("$WEBIMAGE_BIN" load --help 2>/dev/null || true)"
grep -q -- "--http-version" <<< "$help_text" && HAS_VERSION=1
[[ $HAS_VERSION == 1 ]] || echo "needs --http-version: this webimage has no --http-version (HTTP/2 not merged yet); h2 runs skipped, HTTP/1.1 runs use the client's only protocol"

now() { date +%s.%N; }
# Runs `webimage load` on list $1 with HTTP version $2 and concurrency $3; prints wall seconds.
ours() {
    local version=()
    [[ $HAS_VERSION == 1 ]] && version=(--http-version "$2")
    local t0; t0=$(now)
    "$WEBIMAGE_BIN" load --urls-file "$WORK/$1.urls" --concurrency "$3" --ca-file "$WORK/cert.pem" \
        --no-cache --summary-only "${version[@]}" > "$WORK/ours.out" 2>&1 \
        || { echo "webimage load failed: $(tail -3 "$WORK/ours.out")" >&2; return 1; }
    python3 -c "print(f'{$(now)-$t0:.3f}')"
}
# The same downloads through `webimage bench-download` (the downloader alone: no decode, no cache),
# as curl does them: list $1, HTTP version $2, concurrency $3; wall seconds of the whole process.
ours_download() {
    local t0; t0=$(now)
    "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/$1.urls" --concurrency "$3" --ca-file "$WORK/cert.pem" \
        --http-version "$2" > "$WORK/download.out" 2>&1 \
        || { echo "webimage bench-download failed: $(tail -3 "$WORK/download.out")" >&2; return 1; }
    python3 -c "print(f'{$(now)-$t0:.3f}')"
}
theirs() {
    local t0; t0=$(now)
    curl --http2 --parallel --parallel-max 100 -sf --no-progress-meter --cacert "$WORK/cert.pem" -K "$WORK/$1.curl"
    python3 -c "print(f'{$(now)-$t0:.3f}')"
}
# User+sys CPU seconds of one `ours` run straight to nginx, with extra flags $1 and concurrency $2.
cpu_of() {
    # A failed run is reported, not averaged in: /usr/bin/time adds a "Command exited" line then.
    /usr/bin/time -f "%U %S" -o "$WORK/time.out" "$WEBIMAGE_BIN" load --urls-file "$WORK/direct.urls" \
        --concurrency "$2" --ca-file "$WORK/cert.pem" --no-cache --summary-only $1 > "$WORK/cpu.out" 2>&1 \
        || { echo "webimage load $1 failed: $(tail -3 "$WORK/cpu.out")" >&2; return 1; }
    tail -1 "$WORK/time.out" | awk '{printf "%.3f\n", $1 + $2}'
}
# AHCDownloadBench on list $1, client $2 (ahc|ours), mode $3, HTTP version $4, concurrency $5, under
# /usr/bin/time; prints "wall-seconds cpu-ms-per-image" (wall of the whole process, as ours above).
ahc_run() {
    local t0; t0=$(now)
    /usr/bin/time -f "%U %S" -o "$WORK/ahc.time" "$AHC_BIN" --urls-file "$WORK/$1.urls" --client "$2" --mode "$3" \
        --http-version "$4" --concurrency "$5" --ca-file "$WORK/cert.pem" > "$WORK/ahc.out" 2>&1 \
        || { echo "AHCDownloadBench $2 $3 --http-version $4 failed: $(tail -3 "$WORK/ahc.out")" >&2; return 1; }
    echo "$(python3 -c "print(f'{$(now)-$t0:.3f}')") $(cpu_ms_per_image "$WORK/ahc.time" "$FILES")"
}
# The AHC comparison's runs: name -> "client mode version concurrency".
declare -A AHC_RUNS=(
    [ours_loader_h1]="ours loader 1.1 $CONCURRENCY" [ahc_loader_h1]="ahc loader 1.1 $CONCURRENCY"
    [ours_loader_h2]="ours loader 2 100" [ahc_loader_h2]="ahc loader 2 100"
    [ahc_manager_h1]="ahc manager 1.1 $CONCURRENCY" [ahc_manager_h2]="ahc manager 2 100"
)
AHC_ORDER=(ours_loader_h1 ahc_loader_h1 ours_loader_h2 ahc_loader_h2 ahc_manager_h1 ahc_manager_h2)
declare -A AHC_WALL=() AHC_CPU=()
min() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }

echo "files=$FILES (~$SIZE bytes each) rounds=$ROUNDS delay=${DELAY_MS} ms each way, nginx $version (TLS, HTTP/2) on 127.0.0.1:$PORT, relay :$RELAY_PORT"
curl_t=(); h1_t=(); h2_t=(); h2_dl_t=(); h1_cpu=(); h2_cpu=()
HAS_DOWNLOAD_VERSION=0
grep -q -- "--http-version" <<< "$("$WEBIMAGE_BIN" bench-download --help 2>/dev/null || true)" && HAS_DOWNLOAD_VERSION=1
for round in $(seq 1 "$ROUNDS"); do
    c=$(theirs slow); curl_t+=("$c")
    a=$(ours slow 1.1 "$CONCURRENCY"); h1_t+=("$a")
    line="round $round: curl h2 ${c} s, ours HTTP/1.1 x$CONCURRENCY ${a} s"
    if [[ $HAS_VERSION == 1 ]]; then
        b=$(ours slow 2 100); h2_t+=("$b"); line="$line, ours h2 ${b} s"
        if [[ $HAS_DOWNLOAD_VERSION == 1 ]]; then
            d=$(ours_download slow 2 100); h2_dl_t+=("$d"); line="$line, ours h2 download only ${d} s"
        fi
    fi
    echo "$line"
    if [[ $HAS_VERSION == 1 ]]; then
        h1_cpu+=("$(cpu_of "--http-version 1.1" "$CONCURRENCY")"); h2_cpu+=("$(cpu_of "--http-version 2" 100)")
    else
        h1_cpu+=("$(cpu_of "" "$CONCURRENCY")")
    fi
    if [[ -n "$AHC_BIN" ]]; then
        line="         AHCDownloadBench over the link (wall s) / direct (CPU ms per image):"
        for name in "${AHC_ORDER[@]}"; do
            read -r client mode version n <<< "${AHC_RUNS[$name]}"
            read -r w _ <<< "$(ahc_run slow "$client" "$mode" "$version" "$n")"
            read -r _ c <<< "$(ahc_run direct "$client" "$mode" "$version" "$n")"
            AHC_WALL[$name]="${AHC_WALL[$name]:-} $w"; AHC_CPU[$name]="${AHC_CPU[$name]:-} $c"
            line="$line $name ${w}/${c}"
        done
        echo "$line"
    fi
done

best_curl=$(min "${curl_t[@]}"); best_h1=$(min "${h1_t[@]}"); best_h1_cpu=$(min "${h1_cpu[@]}")
per_image() { python3 -c "print(f'{1000*$1/$FILES:.2f}')"; }
echo "best over a ${DELAY_MS} ms-each-way link: curl --http2 ${best_curl} s, ours HTTP/1.1 x$CONCURRENCY ${best_h1} s"
echo "CPU without the relay: ours HTTP/1.1 $(per_image "$best_h1_cpu") ms per image (user+sys)"
if [[ $HAS_VERSION == 1 ]]; then
    best_h2=$(min "${h2_t[@]}"); best_h2_cpu=$(min "${h2_cpu[@]}")
    echo "best: ours h2 ${best_h2} s; CPU without the relay: ours h2 $(per_image "$best_h2_cpu") ms per image"
    echo "HTTP/1.1 / h2 wall = $(python3 -c "print(f'{$best_h1/$best_h2:.2f}')") (target >= 3)"
    echo "curl / ours h2 wall = $(python3 -c "print(f'{$best_curl/$best_h2:.2f}')") (target >= 1.0; ours also decodes every image)"
    if [[ $HAS_DOWNLOAD_VERSION == 1 ]]; then
        best_dl=$(min "${h2_dl_t[@]}")
        echo "curl / ours h2 download only (bench-download: no decode, as curl) wall = $(python3 -c "print(f'{$best_curl/$best_dl:.2f}')") (best ${best_dl} s)"
    fi
    echo "h2 / HTTP/1.1 CPU per image = $(python3 -c "print(f'{$best_h2_cpu/$best_h1_cpu:.2f}')") (target <= 1.3)"
else
    echo "needs --http-version: the h2 ratios (>= 3x over HTTP/1.1, >= 1.0 against curl, CPU within 1.3x) wait for HTTP/2"
    echo "curl --http2 / ours HTTP/1.1 wall = $(python3 -c "print(f'{$best_curl/$best_h1:.2f}')") (for reference)"
fi
if [[ -n "$AHC_BIN" ]]; then
    # Bests over the rounds. Our `webimage load` rows are the runs above (best_h1, best_h2, *_cpu).
    best_of() { min ${1}; }
    ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
    for pair in "loader_h1:ImageLoader alone, HTTP/1.1 x$CONCURRENCY" "loader_h2:ImageLoader alone, h2 x100"; do
        key="${pair%%:*}"; label="${pair#*:}"
        ow=$(best_of "${AHC_WALL[ours_$key]}"); aw=$(best_of "${AHC_WALL[ahc_$key]}")
        oc=$(best_of "${AHC_CPU[ours_$key]}"); ac=$(best_of "${AHC_CPU[ahc_$key]}")
        echo "AsyncHTTPClient, $label: wall ours ${ow} s, AHC ${aw} s (AHC/ours $(ratio "$aw" "$ow")); CPU per image ours ${oc} ms, AHC ${ac} ms (AHC/ours $(ratio "$ac" "$oc"))"
    done
    h1c=$(per_image "$best_h1_cpu"); ac=$(best_of "${AHC_CPU[ahc_manager_h1]}"); aw=$(best_of "${AHC_WALL[ahc_manager_h1]}")
    echo "AsyncHTTPClient, ImageManager (decode), HTTP/1.1 x$CONCURRENCY: wall ours load ${best_h1} s, AHC ${aw} s (AHC/ours $(ratio "$aw" "$best_h1")); CPU per image ours ${h1c} ms, AHC ${ac} ms (AHC/ours $(ratio "$ac" "$h1c"))"
    if [[ $HAS_VERSION == 1 ]]; then
        h2c=$(per_image "$best_h2_cpu"); ac=$(best_of "${AHC_CPU[ahc_manager_h2]}"); aw=$(best_of "${AHC_WALL[ahc_manager_h2]}")
        echo "AsyncHTTPClient, ImageManager (decode), h2 x100: wall ours load ${best_h2} s, AHC ${aw} s (AHC/ours $(ratio "$aw" "$best_h2")); CPU per image ours ${h2c} ms, AHC ${ac} ms (AHC/ours $(ratio "$ac" "$h2c"))"
    fi
fi
