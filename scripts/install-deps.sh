#!/usr/bin/env bash
# Installs the Debian packages swift-webimage builds and tests with, when any is missing.
# Usage: scripts/install-deps.sh [--build | --bench]
#   --build: only what building needs (the Dockerfile's build stage); --bench adds the tools the
#   comparison scripts run.
set -euo pipefail
# What building needs: the codec libraries' headers (and pkg-config, which finds them). What running
# needs instead is deploy/runtime-packages.txt (their shared libraries, no -dev package).
build=(libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libwebp-dev libgif-dev zlib1g-dev libavif-dev libheif-dev
       libjxl-dev liblcms2-dev pkg-config)
# What the tests add: openssl makes the throwaway certificate of the HTTPS tests; python3-pil is the
# tests' decoding oracle; GNU time measures what the decompression-bomb tests cost. libavif-bin,
# libheif-examples and libjxl-tools are the command-line oracles of the AVIF, HEIF and JPEG XL tests
# (avifenc/avifdec, heif-enc/heif-convert, cjxl/djxl); the tests skip without them.
# icc-profiles-free gives the colour tests an Adobe RGB profile.
packages=("${build[@]}" openssl python3-pil time libavif-bin libheif-examples libjxl-tools icc-profiles-free)
if [ "${1:-}" = "--build" ]; then packages=("${build[@]}"); fi
if [ "${1:-}" = "--bench" ]; then
    packages+=(libjpeg-turbo-progs libvips-tools nginx curl python3-pil hyperfine)
    # compare-serve.sh: wrk drives the services; nginx's image_filter module is one of them;
    # python3-venv holds thumbor (from PyPI) under .build/.
    packages+=(wrk libnginx-mod-http-image-filter python3-venv python3-dev libcurl4-openssl-dev libssl-dev)
fi
# The service's end-to-end tests: a real nginx in front of two instances (deploy/nginx.conf),
# headless Chromium rendering the playground page, curl as their HTTP client. Installed when
# possible; without them those tests are skipped (visibly), so a failure here is not fatal.
# tinyproxy is the real HTTP proxy the loader's proxy tests start (forwarding, CONNECT, 407).
optional=(nginx chromium curl tinyproxy)
# The packages among the arguments that are not installed, one a line.
missing_of() {
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || echo "$package"
    done
}
# Installs the arguments with apt (through sudo unless root); fails when apt does.
apt_install() {
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
mapfile -t missing < <(missing_of "${packages[@]}")
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    apt_install "${missing[@]}"
fi
[ "${1:-}" = "--build" ] && exit 0
mapfile -t missing < <(missing_of "${optional[@]}")
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing (optional): ${missing[*]}" >&2
    apt_install "${missing[@]}" ||
        echo "could not install ${missing[*]}: the nginx fleet and Chromium page tests will be skipped" >&2
fi
