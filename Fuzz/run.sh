#!/usr/bin/env bash
# Fuzzes one target with libFuzzer under AddressSanitizer. Targets (the root Package.swift, with
# WEBIMAGE_FUZZ=1): DecodeFuzzer (every decoder; the default), JPEGFuzzer, PNGFuzzer, GIFFuzzer,
# WebPFuzzer, JPEGEighthScaleFuzzer (the 1/8-scale DC decoder alone), HTTPResponseFuzzer (the HTTP/1.1 client), HTTP2FrameFuzzer (the HTTP/2 client),
# DiskEntryFuzzer (the disk cache's entry reader), QueryFuzzer (the service's query and presets),
# ResamplerFuzzer (the resampler's C passes on any geometry; no seeds, its inputs are geometry and noise).
# Seeds: the shared corpus (../shared/corpus, read only) for the decoders, Fuzz/seeds/http,
# Fuzz/seeds/h2 and Fuzz/seeds/query for the others. New inputs go to Fuzz/.corpus/TARGET (ignored by git); a crash is written to
# Fuzz/.findings/ and ends the run with a non-zero status.
#
# The build goes to Fuzz/.build unless --scratch-path names another directory. CI names the test
# build's (.build): the packages under the project's modules are compiled there with the same
# flags, so only the project's own modules build again, instrumented (a test build afterwards
# compiles them once more, uninstrumented).
#
# Usage: Fuzz/run.sh [--target NAME] [--scratch-path DIR] [SECONDS] [extra libFuzzer flags...]   (default 300 seconds)
# WEBIMAGE_FUZZ_TIMEOUT: seconds one input may take (default 10). libFuzzer times wall clock, so a
# campaign under `nice -n 19` beside unniced builds needs more: starved of CPU, an input that runs
# in milliseconds was once reported as a 14-s timeout.
set -euo pipefail
target=DecodeFuzzer
scratch="$(cd "$(dirname "$0")" && pwd -P)/.build"
while [ $# -gt 0 ]; do
    case "$1" in
        --target) target=$2; shift 2 ;;
        --scratch-path) mkdir -p "$2"; scratch="$(cd "$2" && pwd -P)"; shift 2 ;;
        *) break ;;
    esac
done
seconds="${1:-300}"; shift || true
cd "$(dirname "$0")"
../scripts/install-deps.sh
# The flags are the test build's (scripts/test.sh), so a shared scratch directory reuses its objects.
build=(env WEBIMAGE_FUZZ=1 swift build --package-path .. --scratch-path "$scratch" -c release -Xswiftc -enable-testing)
# flock: two campaigns started together would otherwise race for the build database.
mkdir -p "$scratch" && flock "$scratch/fuzz.lock" "${build[@]}" --product "$target" >&2
binary="$("${build[@]}" --show-bin-path)/$target"
mkdir -p ".corpus/$target" .findings
corpus="${WEBIMAGE_CORPUS:-../../shared/corpus}"
case "$target" in
    JPEGFuzzer|JPEGEighthScaleFuzzer) formats=(jpeg exif) ;;
    PNGFuzzer) formats=(png) ;;
    GIFFuzzer) formats=(gif) ;;
    WebPFuzzer) formats=(webp) ;;
    HTTPResponseFuzzer|HTTP2FrameFuzzer|DiskEntryFuzzer|QueryFuzzer|ResamplerFuzzer) formats=() ;;
    *) formats=(jpeg png gif webp exif other) ;;
esac
seeds=()
for format in "${formats[@]}"; do [[ -d "$corpus/$format" ]] && seeds+=("$corpus/$format"); done
case "$target" in
    HTTPResponseFuzzer) seeds+=(seeds/http) ;;
    HTTP2FrameFuzzer) seeds+=(seeds/h2) ;;
    QueryFuzzer) seeds+=(seeds/query) ;;
esac
# The HTTP targets build a whole client pipeline per input, thousands of small allocations:
# ASan's stack unwind for each (malloc_context_size) and its 256 MB quarantine cost them about a
# fifth of their rate (HTTP2FrameFuzzer: 1,197 inputs/s as is, 1,420 so). A finding is replayed
# with full stacks (run the binary on the saved input without these options).
case "$target" in
    HTTPResponseFuzzer|HTTP2FrameFuzzer) export ASAN_OPTIONS="${ASAN_OPTIONS:-malloc_context_size=0:quarantine_size_mb=8}" ;;
esac
# The crash handler of a sanitized Swift binary can hang for minutes.
export SWIFT_BACKTRACE=enable=no
exec "$binary" ".corpus/$target" "${seeds[@]}" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=4096 \
    -timeout="${WEBIMAGE_FUZZ_TIMEOUT:-10}" -artifact_prefix=.findings/ -print_final_stats=1 "$@"
