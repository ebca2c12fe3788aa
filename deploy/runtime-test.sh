#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage without a Docker engine: debootstraps a minimal Debian 12
# (bookworm, `--variant=minbase`, as close to debian:bookworm-slim as debootstrap gets), runs the
# runtime stage's own RUN lines in it (so it installs exactly deploy/runtime-packages.txt and makes
# the same user), copies the static binary in as its COPY lines say, then, inside the chroot as that
# user, with no Swift toolchain and no -dev package: decodes a JPEG, PNG, GIF, WebP, AVIF, HEIC and
# JPEG XL file and a JPEG with an Adobe RGB profile (all made here), starts the image's ENTRYPOINT
# and CMD, runs its HEALTHCHECK, and fetches one /image rendered from a file served on loopback.
# A library the list misses fails it with that library's name.
#
# Usage (root; Debian's packages reachable): deploy/runtime-test.sh
#   WEBIMAGE_STATIC_BIN=path   use this static binary instead of building one (the build goes to
#                              .build-static, as the benchmark scripts' does: --static-swift-stdlib
#                              compiles every module again, so it keeps out of the test build's .build)
#   DEBIAN_MIRROR=URL          the mirror debootstrap uses (default http://deb.debian.org/debian)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
started=$SECONDS
say() { printf 'runtime-test: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap and chroot)"
# The host tools that make the test images, and debootstrap itself.
scripts/install-deps.sh >&2
command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }

binary=${WEBIMAGE_STATIC_BIN:-}
if [ -z "$binary" ]; then
    swift build -c release --static-swift-stdlib --product webimage --scratch-path .build-static >&2
    binary="$(swift build -c release --scratch-path .build-static --show-bin-path)/webimage"
fi
[ -x "$binary" ] || fail "no binary at $binary"
binary=$(realpath "$binary")
if readelf -d "$binary" | grep -q 'NEEDED.*libswiftCore'; then fail "$binary links the Swift runtime dynamically: build it with --static-swift-stdlib"; fi
say "binary: $binary ($((SECONDS - started)) s)"

work=$(mktemp -d /tmp/webimage-runtime.XXXXXX)
root=$work/root

# --- the systemd unit: valid, sandboxed, memory-limited ------------------------------------------
# systemd-analyze reads the unit without a running systemd: `verify` (with the binary it starts at
# this test's path: verify wants it executable) must say nothing, and the offline exposure score
# of the sandbox must stay in its "OK" band.
if command -v systemd-analyze >/dev/null; then
    sed "s|/usr/local/bin/webimage|$binary|" deploy/webimage.service > "$work/webimage.service"
    verdict=$(systemd-analyze verify "$work/webimage.service" 2>&1) || fail "systemd-analyze verify: $verdict"
    [ -z "$verdict" ] || fail "systemd-analyze verify deploy/webimage.service: $verdict"
    exposure=$(systemd-analyze security --offline=true "$work/webimage.service" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    [ -n "$exposure" ] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 2.0 else 1)" "$exposure" ||
        fail "deploy/webimage.service's exposure level is ${exposure:-unknown}, above 2.0"
    for setting in DynamicUser=yes ProtectSystem=strict CacheDirectory=webimage MemoryMax=; do
        grep -q "^$setting" deploy/webimage.service || fail "deploy/webimage.service lacks $setting"
    done
    say "systemd unit: verified, exposure $exposure"
else
    say "SKIPPED the systemd unit's checks: no systemd-analyze (apt-get install systemd)"
fi
serve_pid=""
origin_pid=""
cleanup() {
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
    [ -n "$origin_pid" ] && kill "$origin_pid" 2>/dev/null
    wait 2>/dev/null
    mountpoint -q "$root/proc" && umount "$root/proc"
    rm -rf "$work"
}
trap cleanup EXIT

# --- the base system ---------------------------------------------------------------------------
debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" > "$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
mount -t proc proc "$root/proc"
# This workplace's mirror is a dated snapshot whose Release files may be past their Valid-Until.
echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99runtime-test"
cp /etc/resolv.conf "$root/etc/resolv.conf"
say "debootstrap done ($((SECONDS - started)) s)"

# --- the Dockerfile's runtime stage, line by line ------------------------------------------------
# Its last FROM onwards: RUN lines run in the chroot, COPY lines copy (from the build stage: the
# binary), USER, HEALTHCHECK, ENTRYPOINT and CMD are kept for the checks below.
plan=$(python3 - "$repo/Dockerfile" <<'PY'
import json, shlex, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
lines = [l.strip() for l in text.split("\n") if l.strip() and not l.strip().startswith("#")]
last = max(i for i, l in enumerate(lines) if l.upper().startswith("FROM "))
print("base=%s" % shlex.quote(lines[last].split()[1]))
for line in lines[last + 1:]:
    word, _, rest = line.partition(" ")
    word = word.upper()
    if word == "RUN":
        print("run_in_root %s" % shlex.quote(rest))
    elif word == "COPY":
        args = rest.split()
        source_stage = next((a.split("=", 1)[1] for a in args if a.startswith("--from=")), None)
        args = [a for a in args if not a.startswith("--")]
        print("copy_in %s %s %s" % (shlex.quote(source_stage or ""), shlex.quote(args[0]), shlex.quote(args[1])))
    elif word == "USER":
        print("user=%s" % shlex.quote(rest))
    elif word in ("ENTRYPOINT", "CMD"):
        print("%s=(%s)" % (word.lower(), " ".join(shlex.quote(w) for w in json.loads(rest))))
    elif word == "HEALTHCHECK":
        command = rest[rest.index("CMD ") + 4:]
        print("healthcheck=(%s)" % " ".join(shlex.quote(w) for w in json.loads(command)))
    elif word == "EXPOSE":
        print("expose=%s" % shlex.quote(rest))
    elif word in ("ENV", "WORKDIR", "LABEL", "ARG", "VOLUME", "STOPSIGNAL"):
        print("fail %s" % shlex.quote("the runtime test does not yet carry out " + word))
PY
)
run_in_root() { say "RUN $1"; chroot "$root" /bin/sh -c "$1" > "$work/run.log" 2>&1 || { tail -20 "$work/run.log" >&2; fail "RUN $1"; }; }
copy_in() {
    local stage=$1 source=$2 destination=$3
    if [ -n "$stage" ]; then
        [ "$source" = /usr/local/bin/webimage ] || fail "COPY --from=$stage $source: only the binary comes from the build stage"
        source=$binary
    else
        source=$repo/$source
    fi
    install -D -m 0755 "$source" "$root$destination"
}
user=root
eval "$plan"
[ "$base" = debian:bookworm-slim ] || fail "the runtime stage is FROM $base, not debian:bookworm-slim"
[ "$user" != root ] || fail "the runtime stage runs as root"
[ "$expose" = 8080 ] || fail "the runtime stage exposes $expose, not 8080"
say "runtime stage done ($((SECONDS - started)) s)"

# No compiler, no Swift toolchain, no -dev package; every linked library found.
[ ! -e "$root/opt/swift" ] || fail "/opt/swift exists in the runtime"
dev=$(chroot "$root" dpkg-query -W -f='${Package}\n' | grep -E -- '-dev$|^(gcc|g\+\+|cpp|clang|swift|swiftlang)(-[0-9.]+)?$' || true)
[ -z "$dev" ] || fail "build packages in the runtime: $dev"
compilers=$(chroot "$root" /bin/sh -c 'for tool in cc gcc c++ clang swift swiftc ld; do command -v "$tool"; done' || true)
[ -z "$compilers" ] || fail "build tools in the runtime: $compilers"
missing=$(chroot "$root" ldd /usr/local/bin/webimage | grep 'not found' || true)
[ -z "$missing" ] || fail "libraries not in deploy/runtime-packages.txt: $missing"
as_user() { chroot --userspec="$user:$user" "$root" "$@"; }
as_user /usr/local/bin/webimage --version > "$work/version" || fail "webimage --version"
say "webimage $(cat "$work/version") starts as $user"

# --- one file of each format, decoded in the runtime ---------------------------------------------
fixtures=$root/tmp/fixtures
mkdir -p "$fixtures"
/usr/bin/python3 - "$fixtures" <<'PY'
import sys
from PIL import Image
out = sys.argv[1]
image = Image.new("RGB", (64, 48))
image.putdata([(x * 4, y * 5, 255 - x * 2) for y in range(48) for x in range(64)])
image.save(f"{out}/photo.jpg", quality=90)
image.save(f"{out}/photo.png")
image.save(f"{out}/photo.gif")
image.save(f"{out}/photo.webp", quality=90)
profile = open("/usr/share/color/icc/compatibleWithAdobeRGB1998.icc", "rb").read()
Image.new("RGB", (64, 48), (0, 200, 40)).save(f"{out}/adobe-rgb.jpg", quality=95, icc_profile=profile)
PY
avifenc "$fixtures/photo.png" "$fixtures/photo.avif" > /dev/null
heif-enc -q 80 -o "$fixtures/photo.heic" "$fixtures/photo.png" > /dev/null
cjxl -q 90 "$fixtures/photo.png" "$fixtures/photo.jxl" > /dev/null 2>&1
chmod -R a+rX "$fixtures"
for format in jpg:jpeg png:png gif:gif webp:webp avif:avif heic:heic jxl:jxl; do
    file=photo.${format%%:*} expected=${format##*:}
    as_user /usr/local/bin/webimage decode "/tmp/fixtures/$file" --json > "$work/decode.json" 2>&1 || true
    python3 - "$work/decode.json" "$expected" "$file" <<'PY' || fail "decode $file in the runtime: $(cat "$work/decode.json")"
import json, sys
record = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
if record.get("error") or record.get("format") != sys.argv[2] or (record.get("width"), record.get("height")) != (64, 48):
    sys.exit(1)
PY
done
# The profile is converted (Little CMS at work): the pixels differ from the file's own colours.
as_user /usr/local/bin/webimage decode /tmp/fixtures/adobe-rgb.jpg --json > "$work/converted.json" || fail "decode adobe-rgb.jpg: $(cat "$work/converted.json")"
as_user /usr/local/bin/webimage decode /tmp/fixtures/adobe-rgb.jpg --keep-colors --json > "$work/kept.json" || fail "decode adobe-rgb.jpg --keep-colors"
python3 - "$work/converted.json" "$work/kept.json" <<'PY' || fail "the Adobe RGB JPEG was not converted to sRGB: $(cat "$work/converted.json")"
import json, sys
converted, kept = (json.loads(open(p).read()) for p in sys.argv[1:3])
sys.exit(0 if converted["rgbaSHA256"] != kept["rgbaSHA256"] else 1)
PY
say "decoded JPEG, PNG, GIF, WebP, AVIF, HEIC, JPEG XL and an Adobe RGB JPEG ($((SECONDS - started)) s)"

# --- the service: ENTRYPOINT + CMD, HEALTHCHECK, one /image --------------------------------------
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
origin_port=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$fixtures" "$origin_port" > "$work/origin.log" 2>&1 &
origin_pid=$!
port=$(free_port)
# The image's command as is, then what the test adds: the port (through the environment, as an
# operator would, so the HEALTHCHECK's ${WEBIMAGE_PORT} is exercised too) and the loopback origin
# exempted from the private-address guard.
# shellcheck disable=SC2154 # entrypoint, cmd and healthcheck come from the Dockerfile's plan
chroot --userspec="$user:$user" "$root" /usr/bin/env WEBIMAGE_PORT="$port" WEBIMAGE_LOG_LEVEL=warning \
    "/usr/local/bin/${entrypoint[0]}" "${entrypoint[@]:1}" "${cmd[@]}" --allow-private-source "127.0.0.1:$origin_port" \
    > "$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 300); do
    grep -q 'listening on' "$work/serve.log" && break
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; fail "serve exited"; }
    read -r -t 0.1 < /dev/zero || true   # a tenth of a second, at most 30 s in all
done
grep -q 'listening on' "$work/serve.log" || { cat "$work/serve.log" >&2; fail "serve did not listen within 30 s"; }
grep -q 'listening on http://0.0.0.0:' "$work/serve.log" || fail "the default command does not listen on 0.0.0.0: $(grep listening "$work/serve.log")"
chroot --userspec="$user:$user" "$root" /usr/bin/env WEBIMAGE_PORT="$port" "${healthcheck[@]}" || fail "the HEALTHCHECK command failed"
source="http%3A%2F%2F127.0.0.1%3A$origin_port%2Fphoto.jpg"
status=$(curl -s -o "$work/out.png" -w '%{http_code} %{content_type}' "http://127.0.0.1:$port/image?url=$source&w=32&format=png")
[ "$status" = "200 image/png" ] || fail "/image answered $status: $(head -c 300 "$work/out.png")"
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.exit(0 if d[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(d[16:20], "big") == 32 else 1)' "$work/out.png" ||
    fail "/image did not return a 32-pixel-wide PNG"
say "serve: /healthz by the HEALTHCHECK, /image 200 image/png 32 px wide"
say "passed in $((SECONDS - started)) s"
