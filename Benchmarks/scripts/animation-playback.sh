#!/usr/bin/env bash
# Lazy animation playback of 300-frame 1920x1080 animations (2.4 GB if every frame were decoded):
#  1. a lossy animated WebP whose every frame changes everywhere (made by Pillow, ~35 s): time to
#     the first frame (`webimage play --seconds 0`: start, read the headers, decode frame 0)
#     against decoding every frame (`webimage play --every-frame` at a rate no decoder keeps up
#     with, so each of the 300 frames is decoded and shown in turn); goal: first frame <= 1/20;
#  2. an APNG of a square moving over a gradient: peak resident memory growth of playing all 300
#     frames with a 24 MiB frame buffer, against playing a 64x64 animation of as many frames;
#     goal <= 64 MB. (The WebP's growth is printed too: it includes its ~45 MB of compressed
#     data, which an AnimatedImage keeps.)
#  3. a GIF whose every frame changes everywhere (a gradient sliding, one shared palette): peak
#     resident memory of playing it on the real clock with the default frame buffer, against a
#     1x1 decode; goal: growth <= 64 MiB (issue #30; 75-82 MiB when the default buffer took 64 MiB).
# Usage: Benchmarks/scripts/animation-playback.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-5}"
webimage="${WEBIMAGE:-.build/release/webimage}"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The animation: a gradient default image, then a 64x64 square moving over it (blend source,
# dispose none): 299 small fdAT frames. Pillow encodes the one full-size image; zlib the rest.
make_apng() {
    "$python" - "$1" "$2" "$3" "$4" <<'PY'
import io, struct, sys, zlib
from PIL import Image
path, width, height, frames = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
grad = Image.linear_gradient("L").resize((width, height))
background = Image.merge("RGBA", (grad, grad.transpose(Image.Transpose.ROTATE_180), grad.transpose(Image.Transpose.FLIP_LEFT_RIGHT), Image.new("L", (width, height), 255)))
png = io.BytesIO(); background.save(png, "PNG", compress_level=1); png = png.getvalue()
idats, pos = [], 8
while pos < len(png):
    n = struct.unpack(">I", png[pos:pos + 4])[0]; kind = png[pos + 4:pos + 8]
    if kind == b"IDAT": idats.append(png[pos + 8:pos + 8 + n])
    pos += 12 + n
seq = 0
def fctl(w, h, x, y):
    global seq
    body = struct.pack(">IIIIIHHBB", seq, w, h, x, y, 33, 1000, 0, 0); seq += 1
    return chunk(b"fcTL", body)
out = [b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),
       chunk(b"acTL", struct.pack(">II", frames, 0)), fctl(width, height, 0, 0)] + [chunk(b"IDAT", d) for d in idats]
side = min(64, width, height)
for i in range(1, frames):
    row = bytes([(i * 7) & 255, (255 - i) & 255, 90, 255]) * side
    data = zlib.compress(b"".join(b"\x00" + row for _ in range(side)))
    out.append(fctl(side, side, (i * 13) % (width - side + 1), (i * 7) % (height - side + 1)))
    out.append(chunk(b"fdAT", struct.pack(">I", seq) + data)); seq += 1
out.append(chunk(b"IEND", b""))
open(path, "wb").write(b"".join(out))
PY
}
make_webp() {
    "$python" - "$1" <<'PY'
import sys
from PIL import Image, ImageChops
noise = Image.effect_noise((240, 135), 90).convert("L").resize((1920, 1080), Image.BICUBIC)
gradient = Image.linear_gradient("L").resize((1920, 1080))
base = Image.merge("RGB", (noise, gradient, ImageChops.invert(noise)))
frames = [ImageChops.offset(base, i * 8, i * 3) for i in range(300)]
frames[0].save(sys.argv[1], "WEBP", save_all=True, append_images=frames[1:], duration=33, loop=0, quality=25, method=0)
PY
}
make_gif() {
    "$python" - "$1" "$2" <<'PY'
import sys
from PIL import Image, ImageChops
path, one = sys.argv[1], sys.argv[2]
gradient = Image.linear_gradient("L").resize((1920, 1080))
base = Image.merge("RGB", (gradient, gradient.transpose(Image.Transpose.ROTATE_180), gradient.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
palette = base.quantize(256)
frames = [ImageChops.offset(base, i * 8, i * 3).quantize(palette=palette, dither=Image.Dither.NONE) for i in range(300)]
frames[0].save(path, save_all=True, append_images=frames[1:], duration=33, loop=0)
Image.new("RGB", (1, 1)).save(one)
PY
}
make_webp "$work/fullhd.webp"
ls -l "$work/fullhd.webp" | awk '{printf "WebP: 300 frames of 1920x1080, %.2f MB compressed\n", $5 / 1e6}'
make_apng "$work/fullhd.png" 1920 1080 300
make_apng "$work/small.png" 64 64 300
ls -l "$work/fullhd.png" | awk '{printf "APNG: 300 frames of 1920x1080, %.2f MB compressed\n", $5 / 1e6}'

# Wall-clock milliseconds of one run of the arguments (GNU time's %e is too coarse).
run_ms() { "$python" -c 'import subprocess, sys, time; t = time.perf_counter(); subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); print("%.1f" % ((time.perf_counter() - t) * 1000))' "$@"; }
best() { "$python" -c 'import sys; print(min(map(float, sys.argv[1:])))' "$@"; }

echo "== WebP: time to the first frame vs decoding every frame (best of $rounds)"
first=(); all=()
for round in $(seq "$rounds"); do
    first+=("$(run_ms "$webimage" play "$work/fullhd.webp" --seconds 0 --json)")
    all+=("$(run_ms "$webimage" play "$work/fullhd.webp" --every-frame --rate 1000000 --buffer-mib 24 --json)")
    echo "round $round: first frame ${first[-1]} ms, all 300 frames ${all[-1]} ms"
done
first_ms=$(best "${first[@]}"); all_ms=$(best "${all[@]}")
"$python" -c "f, a = $first_ms, $all_ms; print('first frame %.1f ms, every frame %.1f ms: %.3f of it (goal <= 0.050) %s' % (f, a, f / a, 'PASS' if f / a <= 0.05 else 'FAIL'))"

echo "== APNG: peak resident memory, playing every frame with a 24 MiB buffer"
rss_kb() { /usr/bin/time -f "%M" -o "$work/usage" "$webimage" "$@" > "$work/out" && tail -1 "$work/usage"; }
large_kb=$(rss_kb play "$work/fullhd.png" --every-frame --rate 1000000 --buffer-mib 24 --json)
echo "fullhd: $(cat "$work/out")"
small_kb=$(rss_kb play "$work/small.png" --every-frame --rate 1000000 --buffer-mib 24 --json)
"$python" -c "l, s = $large_kb, $small_kb; g = (l - s) / 1024; print('peak RSS %.1f MB, 64x64 baseline %.1f MB: growth %.1f MB (goal <= 64) %s' % (l / 1024, s / 1024, g, 'PASS' if g <= 64 else 'FAIL'))"
webp_kb=$(rss_kb play "$work/fullhd.webp" --every-frame --rate 1000000 --buffer-mib 24 --json)
"$python" -c "w, s = $webp_kb, $small_kb; print('WebP: peak RSS %.1f MB, growth %.1f MB (with its compressed data)' % (w / 1024, (w - s) / 1024))"

echo "== GIF: peak resident memory, playing on the real clock with the default buffer"
make_gif "$work/fullhd.gif" "$work/one.png"
ls -l "$work/fullhd.gif" | awk '{printf "GIF: 300 frames of 1920x1080, %.2f MB compressed\n", $5 / 1e6}'
gif_kb=$(rss_kb play "$work/fullhd.gif" --json)
echo "fullhd: $(cat "$work/out")"
one_kb=$(rss_kb decode "$work/one.png")
"$python" -c "g, o = $gif_kb, $one_kb; d = (g - o) / 1024; print('peak RSS %.1f MiB, 1x1 decode %.1f MiB: growth %.1f MiB (goal <= 64) %s' % (g / 1024, o / 1024, d, 'PASS' if d <= 64 else 'FAIL'))"
