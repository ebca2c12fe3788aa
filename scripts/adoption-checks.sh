#!/usr/bin/env bash
# What a team adopting swift-webimage relies on, beyond the tests: the container recipe's runtime
# (deploy/runtime-test.sh: a static build, then a debootstrapped Debian 12) and a package outside the
# repository built against the library (scripts/consumer-test.sh: a clean debug build). Together
# about 25 minutes on 2 cores, almost all of it the two builds from nothing, so CI runs them only
# when what they prove changed: their inputs are hashed, and .ci/adoption.sha256 holds the hash of
# the inputs they last passed on (written by this script, after both passed).
# Usage: scripts/adoption-checks.sh              run both, then record the inputs' hash
#        scripts/adoption-checks.sh --if-changed run both only when the hash differs (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.ci/adoption.sha256
# The inputs: the manifest, the container recipe and its package list, the unit, the checks
# themselves, the installer they call, and the C targets (what links or opens which library).
# The manifest's fuzz section (read only with WEBIMAGE_FUZZ=1) is left out: neither check builds it.
inputs_hash() {
    {
        sed '/^if Context.environment\["WEBIMAGE_FUZZ"\] == "1" {/,$d' Package.swift | sha256sum | sed 's/-$/Package.swift/'
        git ls-files -z Dockerfile .dockerignore deploy/runtime-packages.txt deploy/runtime-test.sh \
            deploy/webimage.service scripts/consumer-test.sh scripts/adoption-checks.sh scripts/install-deps.sh \
            'Sources/C*' | sort -z | xargs -0 sha256sum
    } | sha256sum | cut -d' ' -f1
}
current=$(inputs_hash)
if [ "${1:-}" = "--if-changed" ] && [ -f "$stamp" ] && [ "$(cut -d' ' -f1 "$stamp")" = "$current" ]; then
    echo "adoption checks: SKIPPED, their inputs are unchanged since they passed ($(cut -d' ' -f2- "$stamp"));" \
         "run scripts/adoption-checks.sh to run them" >&2
    exit 0
fi
started=$SECONDS
deploy/runtime-test.sh
scripts/consumer-test.sh
echo "$current passed $(date -u +%Y-%m-%d) in $((SECONDS - started)) s" > "$stamp"
echo "adoption checks: passed in $((SECONDS - started)) s; $stamp updated" >&2
