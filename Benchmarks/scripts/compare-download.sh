#!/usr/bin/env bash
# Downloads 1,000 distinct ~100 KB files from a local nginx through ImageDownloader
# (`webimage bench-download`, which takes each body in a completion handler, as curl hands each
# to its output) and through `curl --parallel`, same URLs, same concurrency, and prints both wall
# times and their ratio. Each round also times, for reference, the same downloads taken from
# their tokens' event streams, and the HTTP loader alone without the downloader's queue.
#
# Usage: Benchmarks/scripts/compare-download.sh [--files N] [--size BYTES] [--concurrency N] [--rounds N]
# Env:   WEBIMAGE_BIN=path/to/webimage (default: builds the release product of this package)
#        WEBIMAGE_WRAPPER="perf record -g -o /tmp/p.data" runs the downloader under a profiler
#        NGINX=nginx binary (default: nginx, then /usr/sbin/nginx)
# No root needed: nginx runs in the foreground (daemon off) with a temp prefix and is killed at exit.
set -euo pipefail

FILES=1000
SIZE=102400
CONCURRENCY=6
ROUNDS=3
source "$(dirname "$0")/bench-fixture.sh"
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }

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
echo "files=$FILES size=$SIZE concurrency=$CONCURRENCY rounds=$ROUNDS nginx=127.0.0.1:$PORT"
for round in $(seq 1 "$ROUNDS"); do
    t0=$(now)
    curl --parallel --parallel-max "$CONCURRENCY" -sf --no-progress-meter -K "$WORK/curl.conf"
    t1=$(now)
    ${WEBIMAGE_WRAPPER:-} "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" > "$WORK/webimage.out"
    t2=$(now)
    "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" --streams > "$WORK/streams.out"
    "$WEBIMAGE_BIN" bench-download --urls-file "$WORK/urls.txt" --concurrency "$CONCURRENCY" --loader-only > "$WORK/loader.out"
    curl_s=$(python3 -c "print(f'{$t1-$t0:.3f}')")
    webimage_s=$(python3 -c "print(f'{$t2-$t1:.3f}')")
    round_ratio=$(python3 -c "print(f'{$webimage_s/$curl_s:.2f}')")
    ratios="$ratios $round_ratio"
    echo "round $round: curl ${curl_s} s, ImageDownloader ${webimage_s} s, ratio ${round_ratio} ($(cat "$WORK/webimage.out"))"
    echo "         through event streams instead of handlers: $(cat "$WORK/streams.out")"
    echo "         baseline without the downloader's queue: $(cat "$WORK/loader.out")"
    best_curl=$(python3 -c "print(min(x for x in [$curl_s, ${best_curl:-1e9}]))")
    best_webimage=$(python3 -c "print(min(x for x in [$webimage_s, ${best_webimage:-1e9}]))")
done
ratio=$(python3 -c "print(f'{$best_webimage/$best_curl:.2f}')")
median=$(python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" $ratios)
echo "best: curl ${best_curl} s, ImageDownloader ${best_webimage} s, ratio ImageDownloader/curl = ${ratio} (<= 1.00 means at least as fast)"
echo "median of the per-round ratios: ${median}"
