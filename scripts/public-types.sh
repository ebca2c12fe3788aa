#!/usr/bin/env bash
# Lists the top-level public declarations of the WebImage module (types and typealiases), one a
# line, then their count: the surface a user of the library has to learn. A declaration is
# top-level when it starts a line (nested ones are indented). The same rule is checked by the
# test `PublicSurfaceTests`; `swift symbolgraph-extract -minimum-access-level public` on the
# built module gives the same list.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -rhE '^(@[A-Za-z]+(\([^)]*\))? )*public (final |indirect )?(class|struct|enum|protocol|actor|typealias) ' \
    --include='*.swift' Sources/WebImage |
    sed -E 's/.*public (final |indirect )?(class|struct|enum|protocol|actor|typealias) ([A-Za-z0-9_]+).*/\2 \3/' |
    sort -k2
echo "total: $(grep -rhcE '^(@[A-Za-z]+(\([^)]*\))? )*public (final |indirect )?(class|struct|enum|protocol|actor|typealias) ' \
    --include='*.swift' Sources/WebImage | paste -sd+ | bc)"
