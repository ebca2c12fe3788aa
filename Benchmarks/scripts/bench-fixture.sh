# Sourced by the comparison scripts (after they set their defaults): parses the shared
# arguments, finds or builds the `webimage` binary, and runs a throwaway nginx serving
# $WORK/www on 127.0.0.1:$PORT (start_nginx / stop_nginx; no root needed: nginx runs in the
# foreground with a temp prefix).
# Arguments: --files N --size BYTES --concurrency N --rounds N (each script uses what it needs).
# Env: NGINX_SERVER_EXTRA="directives;" are added to nginx's server block (e.g. limit_rate).
#      WEBIMAGE_BIN=path/to/webimage (default: builds the release product of this package with
#      the Swift runtime linked in, as a Linux command-line tool ships: it starts in about half
#      the time, in its own build directory .build-static).

while [[ $# -gt 0 ]]; do
    case "$1" in
        --files) FILES="$2"; shift 2 ;;
        --size) SIZE="$2"; shift 2 ;;
        --concurrency) CONCURRENCY="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Pillow comes from Debian's python3-pil (scripts/install-deps.sh --bench), which belongs to the
# system's python3; a python3 earlier on PATH (pyenv, a virtualenv) may lack it.
if ! command python3 -c 'import PIL' 2>/dev/null && /usr/bin/python3 -c 'import PIL' 2>/dev/null; then
    python3() { /usr/bin/python3 "$@"; }
fi
if [[ -z "${WEBIMAGE_BIN:-}" ]]; then
    (cd "$ROOT" && swift build -c release --product webimage --static-swift-stdlib --scratch-path .build-static >&2)
    WEBIMAGE_BIN="$ROOT/.build-static/release/webimage"
fi

# find_ahc: sets AHC_BIN for the scripts that also run AsyncHTTPClient (compare-download.sh,
# compare-h2.sh; issue #30): AHC_BIN=path/to/AHCDownloadBench as given, or with AHC=1 the
# release product of the Benchmarks package, built here (Benchmarks/.build). Neither: AHC_BIN
# stays empty and the scripts run as before.
find_ahc() {
    if [[ -z "${AHC_BIN:-}" && "${AHC:-0}" == 1 ]]; then
        (cd "$ROOT/Benchmarks" && swift build -c release --product AHCDownloadBench >&2)
        AHC_BIN="$ROOT/Benchmarks/.build/release/AHCDownloadBench"
    fi
    AHC_BIN="${AHC_BIN:-}"
    if [[ -n "$AHC_BIN" ]]; then
        [[ -x "$AHC_BIN" ]] || { echo "AHC_BIN=$AHC_BIN is not an executable" >&2; exit 1; }
        [[ -x /usr/bin/time ]] || { echo "/usr/bin/time not found (apt-get install time)" >&2; exit 1; }
    fi
}

# make_sources DIR: the benchmarks' 12 MP picture (make-photo.py) and the same picture at 1 MP
# (1155x866, Lanczos), as DIR/12mp.jpg and DIR/1mp.jpg, both JPEG quality 90: the sources of
# compare-serve.sh and compare-render.sh.
make_sources() {
    python3 "$ROOT/Benchmarks/scripts/make-photo.py" "$WORK"
    python3 - "$WORK" "$1" <<'PY'
import sys
from PIL import Image
photo = Image.open(f"{sys.argv[1]}/photo.png")
photo.save(f"{sys.argv[2]}/12mp.jpg", quality=90)
photo.resize((1155, 866), Image.LANCZOS).save(f"{sys.argv[2]}/1mp.jpg", quality=90)
PY
}

# cpu_ms_per_image TIMEFILE FILES: user+sys of a `/usr/bin/time -f "%U %S"` file, in ms per image.
cpu_ms_per_image() {
    tail -1 "$1" | awk -v n="$2" '{printf "%.3f\n", 1000 * ($1 + $2) / n}'
}

start_nginx() {
    local nginx="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
    [[ -x "$nginx" ]] || { echo "nginx not found (apt-get install nginx)" >&2; return 1; }
    mkdir -p "$WORK/logs" "$WORK/tmp"
    # When run as root, nginx workers drop to an unprivileged user: let them read the files.
    chmod -R a+rX "$WORK"
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    cat > "$WORK/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $WORK/logs/nginx.pid;
error_log $WORK/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    client_body_temp_path $WORK/tmp/body;
    proxy_temp_path $WORK/tmp/proxy;
    fastcgi_temp_path $WORK/tmp/fastcgi;
    uwsgi_temp_path $WORK/tmp/uwsgi;
    scgi_temp_path $WORK/tmp/scgi;
    types { image/jpeg jpg; }
    server {
        listen 127.0.0.1:$PORT ${NGINX_LISTEN_FLAGS:-};
        root $WORK/www;
        ${NGINX_SERVER_EXTRA:-}
    }
}
CONF
    "$nginx" -c "$WORK/nginx.conf" -p "$WORK" 2>"$WORK/logs/stderr.log" &
    NGINX_PID=$!
    # NGINX_PROBE_SCHEME/NGINX_CURL_FLAGS: a TLS listener (NGINX_LISTEN_FLAGS="ssl http2") is probed over https.
    local probe="${NGINX_PROBE_SCHEME:-http}://127.0.0.1:$PORT/$(ls "$WORK/www" | head -1)"
    for _ in $(seq 1 50); do
        curl -sf ${NGINX_CURL_FLAGS:-} -o /dev/null "$probe" && return 0
        sleep 0.1
    done
    echo "nginx did not start:" >&2
    cat "$WORK/logs/"* >&2
    return 1
}

# bench_work NAME: a fresh $WORK (/tmp/webimage-NAME.XXXXXX) holding an empty $WORK/www for the
# fixture, removed at exit after the script's own `cleanup_more` (when it defines one: its other
# servers) has run and nginx has stopped.
bench_work() {
    WORK="$(mktemp -d "/tmp/webimage-$1.XXXXXX")"
    mkdir -p "$WORK/www"
    trap bench_cleanup EXIT
}

bench_cleanup() {
    if declare -F cleanup_more >/dev/null; then cleanup_more; fi
    stop_nginx
    rm -rf "$WORK"
}

stop_nginx() {
    if [[ -n "${NGINX_PID:-}" ]]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi >/dev/null
}
