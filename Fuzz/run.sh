#!/usr/bin/env bash
# Fuzzes the decoders with libFuzzer under AddressSanitizer: every format the registered coders
# know, full and thumbnail decodes, and the JPEG 1/8-scale DC decoder with its two-thread split.
# Seeds: the shared corpus (../shared/corpus, read only) when present. New inputs go to
# Fuzz/.corpus (ignored by git); a crash is written to Fuzz/.findings/ and ends the run.
#
# FUZZER=DiskEntryFuzzer fuzzes the disk-cache entry reader instead (its corpus: .corpus-DiskEntryFuzzer).
#
# Usage: [FUZZER=DecodeFuzzer|DiskEntryFuzzer] Fuzz/run.sh [SECONDS] [extra libFuzzer flags...]   (default 300 seconds)
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-300}"; shift || true
../scripts/install-deps.sh
fuzzer="${FUZZER:-DecodeFuzzer}"
swift build -c release --product "$fuzzer" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -use-ld=lld >&2
binary="$(swift build -c release --show-bin-path)/$fuzzer"
seeds=()
if [[ "$fuzzer" == DecodeFuzzer ]]; then
    work=.corpus
    corpus="${WEBIMAGE_CORPUS:-../../shared/corpus}"
    for format in jpeg png gif webp exif other; do [[ -d "$corpus/$format" ]] && seeds+=("$corpus/$format"); done
else
    work=".corpus-$fuzzer"
fi
mkdir -p "$work" .findings
# The crash handler of a sanitized Swift binary can hang for minutes.
export SWIFT_BACKTRACE=enable=no
exec "$binary" "$work" "${seeds[@]}" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 \
    -timeout=10 -artifact_prefix=.findings/ -print_final_stats=1 "$@"
