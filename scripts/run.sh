#!/usr/bin/env bash
# The main job: installs the Debian codec packages if missing, builds the `webimage` CLI in
# release mode and runs it. With no arguments it runs the offline demo; otherwise the arguments
# go to `webimage` (e.g. `scripts/run.sh decode photo.jpg --json`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product webimage >&2
binary="$(swift build -c release --show-bin-path)/webimage"
if [ $# -eq 0 ]; then set -- demo; fi
exec "$binary" "$@"
