#!/usr/bin/env bash
# Cost of colour management: full decode of the same 12-megapixel JPEG without a profile and with
# an embedded Adobe RGB (1998) profile (a matrix/TRC profile like Display P3, so the same lcms2
# pipeline), conversion to sRGB on (the default). Goal: the profile adds <= 15% to the decode.
# Before (lcms2's cmsDoTransform after the decode, ~40 MP/s): 50 ms plain, 367 ms with the profile.
# After (MatrixShaperTransform, rows converted as libjpeg produces them on a second thread), measured
# 2026-11-25 00:35 with a fuzzer holding most of one of the VM's two cores: 70-97 ms plain, 142-168 ms
# with the profile. The conversion alone cost ~5 ns a pixel on one core (~58 ms for 12 MP).
# Then (2026-11-25 04:00): the matrix-shaper loop packs the three outputs as 21-bit lanes of one
# UInt64 (three table loads, two adds, three byte loads, no branch: 30 instructions a pixel, was 44
# with three data-dependent branches; perf puts it at about half its former share of the decode),
# and the decoding thread converts the backlog itself, still in cache, whenever the second thread
# falls behind (RowConversionPipeline.lagBytes) instead of leaving it all for the end. Measured at
# 02:43, before: 48.4 ms plain, 82.8 ms with the profile (+71%). After: this VM ran at load 17 on
# two cores (nine builds at once) and the rounds varied 5x (60-430 ms), so no ratio could be read;
# at 04:20 (load 10): 118.5 ms plain, 197.7 ms with the profile (+67%), plain itself 2.5x its idle time;
# the goal (<= +15%) still needs the second core free to hide the conversion behind the decode.
# Usage: Benchmarks/scripts/compare-color.sh [ITERATIONS]
# Env:   WEBIMAGE_BIN=path/to/webimage (default: builds the release product of this package)
set -euo pipefail
cd "$(dirname "$0")/../.."
iterations="${1:-10}"
scripts/install-deps.sh
if [[ -n "${WEBIMAGE_BIN:-}" ]]; then webimage="$WEBIMAGE_BIN"; else
    swift build -c release --product webimage >&2
    webimage="$(swift build -c release --show-bin-path)/webimage"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 - "$work" <<'PY'
import sys, random
from PIL import Image, ImageDraw, ImageFilter
random.seed(1)
w, h = 4000, 3000
im = Image.linear_gradient("L").resize((w, h)).convert("RGB")
draw = ImageDraw.Draw(im)
for _ in range(400):
    x, y, r = random.randrange(w), random.randrange(h), random.randrange(20, 300)
    draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(random.randrange(256) for _ in range(3)))
im = Image.blend(im.filter(ImageFilter.GaussianBlur(2)), Image.effect_noise((w, h), 24).convert("RGB"), 0.15)
im.save(sys.argv[1] + "/plain.jpg", quality=90)
icc = open("/usr/share/color/icc/compatibleWithAdobeRGB1998.icc", "rb").read()
im.save(sys.argv[1] + "/adobe.jpg", quality=90, icc_profile=icc)
PY

ms() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read())['msPerDecode'])"; }
plain=(); managed=()
# Alternating rounds, best of each: this VM's speed drifts within a minute.
for round in 1 2 3; do
    plain+=("$("$webimage" bench-decode "$work/plain.jpg" --iterations "$iterations" | ms)")
    managed+=("$("$webimage" bench-decode "$work/adobe.jpg" --iterations "$iterations" | ms)")
    echo "round $round: no profile ${plain[-1]} ms, Adobe RGB -> sRGB ${managed[-1]} ms"
done
/usr/bin/python3 -c "
import sys
p, m = min(map(float, sys.argv[1].split())), min(map(float, sys.argv[2].split()))
print('12 MP JPEG decode: %.1f ms plain, %.1f ms with the conversion: +%.1f%% (goal <= 15%%)' % (p, m, (m / p - 1) * 100))
" "${plain[*]}" "${managed[*]}"
