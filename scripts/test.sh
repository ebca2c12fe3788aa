#!/usr/bin/env bash
# Runs every test: installs the Debian codec packages if missing, then `swift test`.
# Tests run optimized (release with testing enabled): the corpus checks hash every frame of
# hundreds of images, which takes minutes unoptimized and seconds optimized.
# The corpus tests read ../shared/corpus when it is there and are skipped (visibly) when not.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
flags=(-c release -Xswiftc -enable-testing)
swift build "${flags[@]}" --build-tests "$@"
exec swift test "${flags[@]}" --skip-build "$@"
