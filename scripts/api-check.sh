#!/usr/bin/env bash
# Checks openapi.yaml against a running `webimage serve` with schemathesis (PyPI, in a virtualenv
# under .build): every response must match the document (status, content type, schema, headers),
# and no 5xx may appear that the document does not name (a 500 is a bug). The instance has an
# allow-listed loopback origin (python's http.server on a free port, substituted for the
# document's example port 18081) and a --local-root, both serving a made PNG, and a preset.
# First, the document itself must be a valid OpenAPI description (openapi-spec-validator, PyPI):
# schemathesis reads what it can and passed a flow mapping whose comma split a description into
# a stray key, which the OpenAPI 3.1 schema refuses.
# Usage: scripts/api-check.sh [EXAMPLES_PER_OPERATION]   (default 60); needs the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${1:-60}"
venv=.build/schemathesis-venv
if [ ! -x "$venv/bin/st" ] || [ ! -x "$venv/bin/openapi-spec-validator" ]; then
    { python3 -m venv "$venv" && "$venv/bin/pip" install -q 'schemathesis>=4,<5' 'openapi-spec-validator>=0.7,<1'; } >&2 || {
        echo "api-check: schemathesis or openapi-spec-validator could not be installed (PyPI unreachable?): skipped" >&2; exit 0; }
fi
"$venv/bin/openapi-spec-validator" openapi.yaml || { echo "api-check: openapi.yaml is not a valid OpenAPI description" >&2; exit 1; }
binary=.build/release/webimage
[ -x "$binary" ] || swift build -c release -Xswiftc -enable-testing --product webimage >&2
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/origin" "$work/cache"
# A 64×48 gradient PNG, written without any imaging library.
python3 - "$work/origin/photo.png" <<'PY'
import struct, sys, zlib
w, h = 64, 48
rows = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 4, y * 5, 128)) for y in range(h))
def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
cp "$work/origin/photo.png" "$work/origin/photo.jpg"   # sniffed, not named: still a PNG
origin_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
python3 -m http.server "$origin_port" --bind 127.0.0.1 --directory "$work/origin" >"$work/origin.log" 2>&1 &
pids+=($!)
"$binary" serve --host 127.0.0.1 --port 0 --cache-dir "$work/cache" \
    --allowed-source "http://127.0.0.1:$origin_port/" --allowed-source 'local:///' \
    --allow-private-source "127.0.0.1:$origin_port" --local-root "$work/origin" \
    --preset 'thumb=w=32&h=32&fit=cover' >"$work/serve.out" 2>"$work/serve.err" &
pids+=($!)
for _ in $(seq 1 100); do
    port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.out")"
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "${port:-}" ] || { echo "api-check: webimage serve did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
sed "s|http://127.0.0.1:18081/|http://127.0.0.1:$origin_port/|g" openapi.yaml >"$work/openapi.yaml"
status=0
timeout --kill-after=10 900 "$venv/bin/st" run "$work/openapi.yaml" --url "http://127.0.0.1:$port" \
    --checks status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,negative_data_rejection \
    --max-examples "$examples" --seed 20261128 --request-timeout 30 --no-color || status=$?
# The document's examples must have reached the origin: otherwise only error paths were checked.
fetched="$(grep -c 'GET /photo' "$work/origin.log" || true)"
echo "api-check: the origin served $fetched source requests"
[ "$fetched" -gt 0 ] || { echo "api-check: no request reached the origin: the 200 paths went unchecked" >&2; status=1; }
if [ "$status" -ne 0 ]; then
    echo "api-check: schemathesis found responses the document does not describe (status $status); the server's stderr:" >&2
    tail -n 40 "$work/serve.err" >&2
fi
exit "$status"
