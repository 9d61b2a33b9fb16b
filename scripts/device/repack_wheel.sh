#!/usr/bin/env bash
# Refreshes the pure-Python files of the wheel in .carry/py/ (made by scripts/device/pack_python.sh,
# ~15 min on 2 cores) from python/cks/*.py of this tree, in seconds: for a change that touches no
# C++ (e.g. cks.torch's eager fast path). The wheel is unpacked, its cks/*.py replaced, and packed
# again with `python3 -m wheel pack`, which rewrites RECORD (hashes and sizes) for the new files.
#
#   bash scripts/device/repack_wheel.sh            # needs `pip install wheel`
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEEL=$(ls .carry/py/cutlass_kernel_selector-*.whl 2> /dev/null | head -1)
[ -n "$WHEEL" ] || { echo "repack_wheel.sh: no wheel in .carry/py (run scripts/device/pack_python.sh)" >&2; exit 2; }
python3 -m wheel version > /dev/null 2>&1 || { echo "repack_wheel.sh: python3 -m wheel is missing (pip install wheel)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -m wheel unpack -d "$TMP/u" "$WHEEL" > /dev/null
DIR=$(ls -d "$TMP"/u/*/)
changed=0
for f in python/cks/*.py; do
  dst="$DIR/cks/$(basename "$f")"
  if [ ! -f "$dst" ] || ! cmp -s "$f" "$dst"; then cp "$f" "$dst"; echo "repack_wheel.sh: $f" >&2; changed=1; fi
done
[ "$changed" = 1 ] || { echo "repack_wheel.sh: the wheel's Python files are already this tree's" >&2; exit 0; }
mkdir -p "$TMP/out"
python3 -m wheel pack -d "$TMP/out" "$DIR" > /dev/null
mv "$TMP"/out/*.whl "$WHEEL"
echo "repack_wheel.sh: $WHEEL repacked" >&2
