#!/usr/bin/env bash
# Fuzzes one target with libFuzzer under AddressSanitizer. Targets (Package.swift): DecodeFuzzer
# (every decoder; the default), JPEGFuzzer, PNGFuzzer, GIFFuzzer, WebPFuzzer, HTTPResponseFuzzer,
# DiskEntryFuzzer (the disk cache's entry reader).
# Seeds: the shared corpus (../shared/corpus, read only) for the decoders, Fuzz/seeds/http for the
# HTTP client. New inputs go to Fuzz/.corpus/TARGET (ignored by git); a crash is written to
# Fuzz/.findings/ and ends the run with a non-zero status.
#
# Usage: Fuzz/run.sh [--target NAME] [SECONDS] [extra libFuzzer flags...]   (default 300 seconds)
set -euo pipefail
cd "$(dirname "$0")"
target=DecodeFuzzer
if [ "${1:-}" = "--target" ]; then target=$2; shift 2; fi
seconds="${1:-300}"; shift || true
../scripts/install-deps.sh
# lld: gold stops with an internal error on the sanitized build.
# flock: two campaigns started together would otherwise race for the build database.
mkdir -p .build && flock .build/run.lock swift build -c release --product "$target" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -use-ld=lld >&2
binary="$(swift build -c release --show-bin-path)/$target"
mkdir -p ".corpus/$target" .findings
corpus="${WEBIMAGE_CORPUS:-../../shared/corpus}"
case "$target" in
    JPEGFuzzer) formats=(jpeg exif) ;;
    PNGFuzzer) formats=(png) ;;
    GIFFuzzer) formats=(gif) ;;
    WebPFuzzer) formats=(webp) ;;
    HTTPResponseFuzzer|DiskEntryFuzzer) formats=() ;;
    *) formats=(jpeg png gif webp exif other) ;;
esac
seeds=()
for format in "${formats[@]}"; do [[ -d "$corpus/$format" ]] && seeds+=("$corpus/$format"); done
[ "$target" = HTTPResponseFuzzer ] && seeds+=(seeds/http)
# The crash handler of a sanitized Swift binary can hang for minutes.
export SWIFT_BACKTRACE=enable=no
exec "$binary" ".corpus/$target" "${seeds[@]}" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=4096 \
    -timeout=10 -artifact_prefix=.findings/ -print_final_stats=1 "$@"
