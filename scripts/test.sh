#!/usr/bin/env bash
# Runs every test: installs the Debian codec packages if missing, then `swift test`.
# The corpus tests read ../shared/corpus when it is there and are skipped (visibly) when not.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests "$@"
exec swift test --skip-build "$@"
