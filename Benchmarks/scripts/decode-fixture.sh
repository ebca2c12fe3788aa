# Sourced by the decode comparisons (from the repository root, after they set `iterations`):
# installs the tools, builds the release `webimage` ($webimage), makes a work directory removed at
# exit ($work) and draws the 12 MP test picture into it (photo.png, photo.jpg, photo.webp).
scripts/install-deps.sh --bench
python3 -c "import PIL" 2>/dev/null || pip install -q pillow
# WEBIMAGE_BIN=path/to/webimage measures that binary instead of building this package's.
if [[ -n "${WEBIMAGE_BIN:-}" ]]; then
    webimage="$WEBIMAGE_BIN"
else
    swift build -c release --product webimage >&2
    webimage="$(swift build -c release --show-bin-path)/webimage"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 Benchmarks/scripts/make-photo.py "$work"
