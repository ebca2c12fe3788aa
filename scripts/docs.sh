#!/usr/bin/env bash
# Renders the DocC documentation as a static site, every DocC warning an error: the catalogs
# Sources/WebImage/WebImage.docc and Sources/WebImageServer/WebImageServer.docc over their modules'
# public symbol graphs, and WebImageHTTP's symbols (re-exported by WebImage, no catalog of its own)
# so that the links into it open. Each module is converted on its own (`docc convert
# --warnings-as-errors --transform-for-static-hosting`), with the archives of the modules it links
# into as dependencies (links to another module's symbols are written with its module path,
# ``/WebImageHTTP/HTTPLoadRequest``), then `docc merge` joins the three into one site.
#
# The site is SCRATCH/docs (.build/docs by default). DocC pages load their content with fetch(),
# so open it over HTTP, not as a file:
#   python3 -m http.server --directory .build/docs 8000
#   then http://127.0.0.1:8000/documentation/webimage and /documentation/webimageserver
#
# The symbol graphs (`swift package dump-symbol-graph`, public symbols) are extracted from a build
# with the test build's flags (scripts/test.sh: release, -enable-testing), in the test build's
# directory by default, so after the tests little compiles again (SwiftPM's dump-symbol-graph
# rebuilds HummingbirdCore and Hummingbird each time, with settings of its own). Measured here
# (2 shared cores): 108 s right after a test build, 71 s for a run after that, 42 s when
# --if-changed skips the render; from nothing, a release build of the package first (12-16 min).
#
# CI runs it with --if-changed: the inputs of the render (the symbol graphs of the three modules,
# without source paths and line numbers, so only public declarations and their doc comments count;
# the two catalogs; this script; the toolchain's version) are hashed, and the render is skipped
# when .ci/docs.sha256 holds that hash: the hash of the inputs the docs last rendered from without a
# warning (written by this script after a clean render). A renamed member, a new link or a new
# public declaration changes the hash, so the docs render again and fail visibly on a warning.
#
# Usage: scripts/docs.sh [--if-changed] [--scratch-path DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
if_changed=false
scratch=.build
while [ $# -gt 0 ]; do
    case "$1" in
        --if-changed) if_changed=true; shift ;;
        --scratch-path) scratch=$2; shift 2 ;;
        *) echo "usage: scripts/docs.sh [--if-changed] [--scratch-path DIR]" >&2; exit 2 ;;
    esac
done
stamp=.ci/docs.sha256
started=$SECONDS
docc=$(command -v docc || true)
[ -n "$docc" ] || docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
[ -x "$docc" ] || { echo "docs: no docc beside swift ($docc)" >&2; exit 1; }
scripts/install-deps.sh

# 1. The symbol graphs, from a build with the test build's flags.
flags=(--scratch-path "$scratch" -c release -Xswiftc -enable-testing)
# SwiftPM 6.3 also tries the package's test modules, which a build without tests lacks, and exits
# non-zero for them after writing every other graph: its status is not the verdict, the three
# graphs this needs are (written afresh: the directory is emptied first).
graphs="$(dirname "$(swift build "${flags[@]}" --show-bin-path)")/symbolgraph"
rm -rf "$graphs"
swift package "${flags[@]}" dump-symbol-graph --minimum-access-level public --emit-extension-block-symbols >&2 || true
for module in WebImageHTTP WebImage WebImageServer; do
    [ -f "$graphs/$module.symbols.json" ] || {
        echo "docs: FAILED: no symbol graph for $module in $graphs (did the build fail? see above)" >&2; exit 1; }
done
work="$scratch/docc"
rm -rf "$work"
modules=(WebImageHTTP WebImage WebImageServer)
for module in "${modules[@]}"; do
    mkdir -p "$work/graphs/$module"
    cp "$graphs/$module.symbols.json" "$work/graphs/$module/"
    # Extensions of other modules' types, when there are any.
    find "$graphs" -maxdepth 1 -name "$module@*.symbols.json" -exec cp {} "$work/graphs/$module/" \;
done

# 2. The stamp's hash: the graphs without what depends on the checkout's path or on lines that
# moved (locations, doc comments' source ranges), the catalogs, this script, the toolchain.
inputs_hash() {
    {
        python3 - "$work/graphs" <<'PY'
import hashlib, json, os, sys
root = sys.argv[1]
def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in ("location", "uri", "range", "generator")}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value
for module in sorted(os.listdir(root)):
    for name in sorted(os.listdir(os.path.join(root, module))):
        graph = strip(json.load(open(os.path.join(root, module, name))))
        graph["symbols"] = sorted(graph.get("symbols", []), key=lambda s: json.dumps(s, sort_keys=True))
        graph["relationships"] = sorted(graph.get("relationships", []), key=lambda r: json.dumps(r, sort_keys=True))
        digest = hashlib.sha256(json.dumps(graph, sort_keys=True).encode()).hexdigest()
        print(f"{digest}  {module}/{name}")
PY
        git ls-files -z Sources/WebImage/WebImage.docc Sources/WebImageServer/WebImageServer.docc scripts/docs.sh \
            | sort -z | xargs -0 sha256sum
        swift --version 2>/dev/null | head -1
    } | sha256sum | cut -d' ' -f1
}
current=$(inputs_hash)
if $if_changed && [ -f "$stamp" ] && [ "$(cut -d' ' -f1 "$stamp")" = "$current" ]; then
    echo "docs: SKIPPED, the symbol graphs and catalogs are unchanged since they rendered without a warning" \
         "($(cut -d' ' -f2- "$stamp")); run scripts/docs.sh to render them" >&2
    exit 0
fi

# 3. One archive per module, each with the archives it links into, every warning an error.
convert() {
    local module=$1; shift
    local catalog=()
    [ -d "Sources/$module/$module.docc" ] && catalog=("Sources/$module/$module.docc")
    echo "docs: rendering $module" >&2
    "$docc" convert "${catalog[@]}" \
        --additional-symbol-graph-dir "$work/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "$module" \
        --output-path "$work/$module.doccarchive" \
        --transform-for-static-hosting --enable-experimental-external-link-support \
        --warnings-as-errors "$@" >&2 || {
        echo "docs: FAILED: $module's documentation has warnings (above): fix them, then run scripts/docs.sh" >&2
        exit 1
    }
}
convert WebImageHTTP
convert WebImage --dependency "$work/WebImageHTTP.doccarchive"
convert WebImageServer --dependency "$work/WebImage.doccarchive" --dependency "$work/WebImageHTTP.doccarchive"

# 4. One site: a landing page listing the three modules.
rm -rf "$scratch/docs"
"$docc" merge "$work/WebImage.doccarchive" "$work/WebImageServer.doccarchive" "$work/WebImageHTTP.doccarchive" \
    --synthesized-landing-page-name swift-webimage --output-path "$scratch/docs" >&2
echo "$current rendered $(date -u +%Y-%m-%d) with no warnings in $((SECONDS - started)) s" > "$stamp"
echo "docs: rendered without a warning in $((SECONDS - started)) s: $scratch/docs; $stamp updated." >&2
echo "docs: open it over HTTP: python3 -m http.server --directory $scratch/docs 8000, then http://127.0.0.1:8000/documentation/webimage" >&2
