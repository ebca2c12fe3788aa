#!/usr/bin/env bash
# Runs every test: installs the Debian codec packages if missing, then `swift test`.
# Tests run optimized (release with testing enabled): the corpus checks hash every frame of
# hundreds of images, which takes minutes unoptimized and seconds optimized.
# The corpus tests read ../shared/corpus when it is there and are skipped (visibly) when not.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The corpus manifest's oracle, Pillow 13 (it decodes AVIF; Debian's Pillow does not), in a
# virtualenv under .build; without PyPI the AVIF tolerance test is skipped, visibly.
venv=.build/pillow-venv
if [ -z "${WEBIMAGE_PILLOW_PYTHON:-}" ]; then
    if [ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q pillow==13.0.0; } >&2; then
        export WEBIMAGE_PILLOW_PYTHON="$PWD/$venv/bin/python"
    else
        echo "no Pillow 13 (PyPI unreachable?): the AVIF comparison with Pillow is skipped" >&2
    fi
fi
# The S3 suites' real peers: moto's S3 server and botocore's SigV4 signer (PyPI), for the python3
# on PATH; without them those suites are skipped, visibly.
if ! python3 -c 'import moto.server, boto3, botocore, flask' 2>/dev/null; then
    python3 -m pip install -q 'moto[server]' boto3 >&2 || echo "no moto[server] (PyPI unreachable?): the S3 suites are skipped" >&2
fi
# The thumbor dialect's references (#45): thumbor 7.8 itself (PIL engine), the oracle its tests
# answer the same URLs as, and libthumbor (its dependency), whose CryptoURL builds the signed URLs.
# Without PyPI those suites are skipped, visibly.
thumbor_venv=.build/thumbor-venv
if [ -z "${WEBIMAGE_THUMBOR_PYTHON:-}" ]; then
    if [ -x "$thumbor_venv/bin/thumbor" ] || { python3 -m venv "$thumbor_venv" && "$thumbor_venv/bin/pip" install -q thumbor==7.8.0; } >&2; then
        export WEBIMAGE_THUMBOR_PYTHON="$PWD/$thumbor_venv/bin/python"
    else
        echo "no thumbor 7.8 (PyPI unreachable?): the thumbor dialect's comparisons with thumbor and libthumbor are skipped" >&2
    fi
fi
# The imgproxy dialect's URL builder (#45): the PyPI package `imgproxy` (its `ImgProxy` class), in
# its own virtualenv; without PyPI that suite is skipped, visibly.
imgproxy_venv=.build/imgproxy-venv
if [ -z "${WEBIMAGE_IMGPROXY_PYTHON:-}" ]; then
    if "$imgproxy_venv/bin/python" -c 'import imgproxy' 2>/dev/null || { python3 -m venv "$imgproxy_venv" && "$imgproxy_venv/bin/pip" install -q imgproxy==1.0.0; } >&2; then
        export WEBIMAGE_IMGPROXY_PYTHON="$PWD/$imgproxy_venv/bin/python"
    else
        echo "no imgproxy 1.0.0 package (PyPI unreachable?): the imgproxy dialect's end-to-end tests are skipped" >&2
    fi
fi
# libvips 8.18 (pyvips and pyvips-binary from PyPI), the reference for imgproxy's trim (#45): the
# same virtualenv compare-render.sh uses; without PyPI that comparison is skipped, visibly.
vips_venv=.build/vips-venv
if [ -z "${WEBIMAGE_VIPS_PYTHON:-}" ]; then
    if "$vips_venv/bin/python" -c 'import pyvips' 2>/dev/null || { python3 -m venv "$vips_venv" && "$vips_venv/bin/pip" install -q pyvips pyvips-binary==8.18.7; } >&2; then
        export WEBIMAGE_VIPS_PYTHON="$PWD/$vips_venv/bin/python"
    else
        echo "no pyvips 8.18 (PyPI unreachable?): the comparison of imgproxy's trim with libvips is skipped" >&2
    fi
fi
flags=(-c release -Xswiftc -enable-testing)
swift build "${flags[@]}" --build-tests "$@"
# Four runs: the suites whose loopback servers and timeouts keep time first, alone; then the
# service suites (the image server, the nginx fleet, headless Chromium, progressive loads over a
# throttled link, the manager's progressive option), whose decodes, encodes and child processes would starve the first group; then
# the rest. Decoder and colour suites hold the two cooperative threads for seconds at a time, which
# on two cores delays a loopback server's drip or a test's reading past a one-second idle timeout.
# Every suite of the HTTP stack's own target (WebImageHTTPTests) keeps time. The proxy and
# client-certificate suites make keys and CAs with `openssl` and start tinyproxy, waiting on those
# processes from a cooperative thread: beside the first group they stalled its loads for 3 s.
# HTTP2CompletionTests opens dozens of h2 connections at once: beside the first group, loads of
# other suites waited past their 1-s idle timeouts for their first bytes.
timed='WebImageHTTPTests\.|WebImageTests\.(HTTP|ImageDownloader|Connect|ResourceTimeout|Redirect|Upgrade|ExtremeTimeout|Transport|Trusted|CookieJar|RequestValidation|LocalLoader|DownloadTaskSlot|PartialDataThrottle|Retry|CLI|LoadJSONContract|DecodeNewFormatsCLI)'
services='WebImageTests\.(Server|Fleet|ProgressiveLoad|LoadProgressiveCLI|ImageManagerOptions|Proxy|CLIProxy|CLITrust)|WebImageHTTPTests\.HTTP2CompletionTests'
# Headless Chromium on the playground page, alone: its virtual-time budget ran out before an
# image's decode() resolved when it shared the two cores with the services run (moto's S3 server
# starting, renders, child processes), and the page never settled.
page='WebImageTests\.PlaygroundPage'
# Each run is bounded (each takes 1-3 minutes here): a hang, or a crash whose backtrace never
# ends, fails the run with the tests it was in instead of holding CI until its own limit. Output is
# line-buffered so that the log ends with the last test that started, not mid-way through a block.
run_tests() {
    timeout --kill-after=30 "${WEBIMAGE_TEST_RUN_LIMIT:-900}" stdbuf -oL -eL \
        swift test "${flags[@]}" --skip-build "$@" || {
        status=$?
        [ "$status" -eq 124 ] && echo "test run stopped after ${WEBIMAGE_TEST_RUN_LIMIT:-900} s: swift test $*" >&2
        return "$status"
    }
}
# One test at a time: every loader test runs over HTTP/1.1, h2 and h2c, and 164 of them started at
# once on 2 cores left some loads without their first byte past a 1-s idle timeout.
run_tests --no-parallel --filter "$timed" --skip "$services|$page" "$@"
run_tests --filter "$services" --skip "$page" "$@"
run_tests --no-parallel --filter "$page" "$@"
run_tests --skip "$timed|$services|$page" "$@"
