#!/usr/bin/env bash
# Downloads 1,000 distinct ~100 KB files from a local nginx through ImageDownloader
# (`webimage bench-download`, which takes each body in a completion handler, as curl hands each
# to its output) and through `curl --parallel`, same URLs, same concurrency, and prints both wall
# times and their ratio. Each round also times, for reference, the same downloads taken from
# their tokens' event streams, and the HTTP loader alone without the downloader's queue.
# With AsyncHTTPClient (AHC_BIN or AHC=1), each round then also runs AHCDownloadBench (the
# Benchmarks package): an ImageLoader over AHC taken as --loader-only takes ours, and AHC's
# delegate API with completion handlers, N at a time; our two runs it is set against are timed
# with /usr/bin/time too, and the AHC lines (wall, user+sys CPU per file) follow the round's lines.
#
# Usage: Benchmarks/scripts/compare-download.sh [--files N] [--size BYTES] [--concurrency N] [--rounds N]
# Env:   WEBIMAGE_BIN=path/to/webimage (default: builds the release product of this package)
#        WEBIMAGE_WRAPPER="perf record -g -o /tmp/p.data" runs the downloader under a profiler
#        NGINX=nginx binary (default: nginx, then /usr/sbin/nginx)
#        AHC_BIN=path/to/AHCDownloadBench, or AHC=1 to build it (cd Benchmarks && swift build -c release
#        --product AHCDownloadBench): also run AsyncHTTPClient (issue #30). Unset: the script as before.
# No root needed: nginx runs in the foreground (daemon off) with a temp prefix and is killed at exit.
set -euo pipefail

FILES=1000
SIZE=102400
CONCURRENCY=6
ROUNDS=3
source "$(dirname "$0")/bench-fixture.sh"
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }
find_ahc

bench_work bench
python3 - "$WORK/www" "$FILES" "$SIZE" <<'PY'
import os, sys
root, files, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(files):
    with open(os.path.join(root, f"{n}.jpg"), "wb") as f:
        f.write(os.urandom(size))
PY

start_nginx

: > "$WORK/urls.txt"
: > "$WORK/curl.conf"
for n in $(seq 0 $((FILES - 1))); do
    echo "http://127.0.0.1:$PORT/$n.jpg" >> "$WORK/urls.txt"
    printf 'url = "http://127.0.0.1:%s/%s.jpg"\noutput = "/dev/null"\n' "$PORT" "$n" >> "$WORK/curl.conf"
done

now() { date +%s.%N; }
best_curl=""
best_webimage=""
ratios=""
# With AHC: our handler and loader-only runs under /usr/bin/time (CPU), and the AHC runs' bests.
TIME_OURS=(); TIME_LOADER=()
if [[ -n "$AHC_BIN" ]]; then
    TIME_OURS=(/usr/bin/time -f "%U %S" -o "$WORK/ours.time")
    TIME_LOADER=(/usr/bin/time -f "%U %S" -o "$WORK/loader.time")
fi
ahc_best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
ours_h_wall=(); ours_h_cpu=(); ours_l_wall=(); ours_l_cpu=(); ahc_l_wall=(); ahc_l_cpu=(); ahc_h_wall=(); ahc_h_cpu=()
# Runs AHCDownloadBench in mode $1 under /usr/bin/time; prints "wall cpu-ms-per-file".
ahc_run() {
    local t0; t0=$(now)
    /usr/bin/time -f "%U %S" -o "$WORK/ahc.time" "$AHC_BIN" --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" \
        --mode "$1" > "$WORK/ahc.out" 2>&1 || { echo "AHCDownloadBench --mode $1 failed: $(tail -3 "$WORK/ahc.out")" >&2; return 1; }
    echo "$(python3 -c "print(f'{$(now)-$t0:.3f}')") $(cpu_ms_per_image "$WORK/ahc.time" "$FILES")"
}
echo "files=$FILES size=$SIZE concurrency=$CONCURRENCY rounds=$ROUNDS nginx=127.0.0.1:$PORT"
for round in $(seq 1 "$ROUNDS"); do
    t0=$(now)
    curl --parallel --parallel-max "$CONCURRENCY" -sf --no-progress-meter -K "$WORK/curl.conf"
    t1=$(now)
    ${WEBIMAGE_WRAPPER:-} "${TIME_OURS[@]}" "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" > "$WORK/webimage.out"
    t2=$(now)
    "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" --streams > "$WORK/streams.out"
    t3=$(now)
    "${TIME_LOADER[@]}" "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" --loader-only > "$WORK/loader.out"
    t4=$(now)
    curl_s=$(python3 -c "print(f'{$t1-$t0:.3f}')")
    webimage_s=$(python3 -c "print(f'{$t2-$t1:.3f}')")
    round_ratio=$(python3 -c "print(f'{$webimage_s/$curl_s:.2f}')")
    ratios="$ratios $round_ratio"
    echo "round $round: curl ${curl_s} s, ImageDownloader ${webimage_s} s, ratio ${round_ratio} ($(cat "$WORK/webimage.out"))"
    echo "         through event streams instead of handlers: $(cat "$WORK/streams.out")"
    echo "         baseline without the downloader's queue: $(cat "$WORK/loader.out")"
    if [[ -n "$AHC_BIN" ]]; then
        ours_h_wall+=("$webimage_s"); ours_h_cpu+=("$(cpu_ms_per_image "$WORK/ours.time" "$FILES")")
        ours_l_wall+=("$(python3 -c "print(f'{$t4-$t3:.3f}')")"); ours_l_cpu+=("$(cpu_ms_per_image "$WORK/loader.time" "$FILES")")
        read -r w c <<< "$(ahc_run loader)"; ahc_l_wall+=("$w"); ahc_l_cpu+=("$c")
        echo "         AsyncHTTPClient loader, as --loader-only: ${w} s, ${c} ms CPU per file (ours --loader-only ${ours_l_wall[-1]} s, ${ours_l_cpu[-1]} ms) ($(cat "$WORK/ahc.out"))"
        read -r w c <<< "$(ahc_run handlers)"; ahc_h_wall+=("$w"); ahc_h_cpu+=("$c")
        echo "         AsyncHTTPClient delegate handlers: ${w} s, ${c} ms CPU per file (ours ImageDownloader ${webimage_s} s, ${ours_h_cpu[-1]} ms) ($(cat "$WORK/ahc.out"))"
    fi
    best_curl=$(python3 -c "print(min(x for x in [$curl_s, ${best_curl:-1e9}]))")
    best_webimage=$(python3 -c "print(min(x for x in [$webimage_s, ${best_webimage:-1e9}]))")
done
ratio=$(python3 -c "print(f'{$best_webimage/$best_curl:.2f}')")
median=$(python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" $ratios)
echo "best: curl ${best_curl} s, ImageDownloader ${best_webimage} s, ratio ImageDownloader/curl = ${ratio} (<= 1.00 means at least as fast)"
echo "median of the per-round ratios: ${median}"
if [[ -n "$AHC_BIN" ]]; then
    # Wall: whole processes (start-up included), best of the rounds; CPU: user+sys per file, best of the rounds.
    a=$(ahc_best "${ours_l_wall[@]}"); b=$(ahc_best "${ahc_l_wall[@]}"); ac=$(ahc_best "${ours_l_cpu[@]}"); bc=$(ahc_best "${ahc_l_cpu[@]}")
    echo "AsyncHTTPClient, loader alone: best ours ${a} s ${ac} ms CPU per file, AHC ${b} s ${bc} ms; AHC/ours wall = $(python3 -c "print(f'{$b/$a:.2f}')"), CPU = $(python3 -c "print(f'{$bc/$ac:.2f}')")"
    a=$(ahc_best "${ours_h_wall[@]}"); b=$(ahc_best "${ahc_h_wall[@]}"); ac=$(ahc_best "${ours_h_cpu[@]}"); bc=$(ahc_best "${ahc_h_cpu[@]}")
    echo "AsyncHTTPClient, handlers: best ours ImageDownloader ${a} s ${ac} ms CPU per file, AHC delegate ${b} s ${bc} ms; AHC/ours wall = $(python3 -c "print(f'{$b/$a:.2f}')"), CPU = $(python3 -c "print(f'{$bc/$ac:.2f}')")"
fi
