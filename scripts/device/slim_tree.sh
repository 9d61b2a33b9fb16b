#!/usr/bin/env bash
# A device call carries the working tree (tracked files and untracked, unignored ones) plus its
# `carry` paths, 64 MiB in all; the committed corpus (data/shards), the shipped model and a few
# large plan files are far more than that, and nothing on the device reads them (plans and the
# model travel in .carry). This moves the large tracked files out of the tree for the calls and
# back after, and guards the commits made meanwhile: while they are out, a pre-commit hook refuses
# any commit that deletes a tracked file, since `git commit -a` would otherwise record the corpus
# as deleted (it happened once, session 40, and was undone before it left the machine).
#
#   scripts/device/slim_tree.sh out      move every tracked file of at least $MIN_KB (default 256)
#                                        KiB to $HOLD (default ../<repo>-hold), listed in its manifest,
#                                        except Markdown and files with uncommitted changes
#   scripts/device/slim_tree.sh in       move them back (per the manifest) and drop the guard
#   scripts/device/slim_tree.sh status   what is out, and the size a call would carry now
# Refuses `out` while a manifest exists (files already out) and `in` over a file that came back
# some other way (it would be overwritten); exit 2 on any refusal.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
HOLD=${HOLD:-$(dirname "$ROOT")/$(basename "$ROOT")-hold}
MANIFEST=$HOLD/manifest.txt
MIN_KB=${MIN_KB:-256}
HOOK=$(git rev-parse --git-path hooks)/pre-commit
MARK="# cks slim_tree guard"

move_listed() {  # LIST FROM_PREFIX TO_PREFIX: moves each listed path, making its folder; prints the count
  local n=0 f
  while IFS= read -r f; do
    mkdir -p "$(dirname "$3$f")"
    mv "$2$f" "$3$f"
    n=$((n + 1))
  done < "$1"
  echo "$n"
}

carried_bytes() {  # what a call carries without `carry`: tracked and untracked, unignored files present
  git ls-files -z -co --exclude-standard | xargs -0 -r stat -c '%s' 2> /dev/null | awk '{s += $1} END {print s + 0}'
}

case "${1:-}" in
  out)
    [ ! -e "$MANIFEST" ] || { echo "slim_tree.sh: files are already out ($MANIFEST); run 'in' first" >&2; exit 2; }
    mkdir -p "$HOLD"
    # Markdown (NOTES.md is large) and files with uncommitted changes stay: they are what one
    # edits between calls, and a file edited while out would come back as the old one.
    git diff --name-only HEAD > "$HOLD/changed.tmp"
    git ls-files -z | xargs -0 -r stat -c '%s %n' 2> /dev/null |
      awk -v min=$((MIN_KB * 1024)) '$1 >= min && $2 !~ /\.md$/ {sub(/^[0-9]+ /, ""); print}' |
      grep -vxF -f "$HOLD/changed.tmp" > "$HOLD/manifest.tmp" || true
    rm -f "$HOLD/changed.tmp"
    n=$(move_listed "$HOLD/manifest.tmp" "" "$HOLD/")
    mv "$HOLD/manifest.tmp" "$MANIFEST"
    if [ -e "$HOOK" ] && ! grep -q "$MARK" "$HOOK"; then
      echo "slim_tree.sh: $HOOK exists and is not ours; no guard installed (do not commit with -a)" >&2
    else
      mkdir -p "$(dirname "$HOOK")"
      cat > "$HOOK" <<EOF
#!/usr/bin/env bash
$MARK: files of this tree are moved out for a device call (scripts/device/slim_tree.sh in)
if git diff --cached --name-only --diff-filter=D | grep -q .; then
  echo "pre-commit: this commit deletes tracked files while slim_tree.sh has them out; refused" >&2
  echo "  (git reset, then commit what you meant; or scripts/device/slim_tree.sh in first)" >&2
  exit 1
fi
EOF
      chmod +x "$HOOK"
    fi
    echo "slim_tree.sh: $n file(s) moved to $HOLD; a call now carries $(($(carried_bytes) / 1048576)) MiB plus its carry paths (64 MiB in all)"
    ;;
  in)
    [ -e "$MANIFEST" ] || { echo "slim_tree.sh: nothing is out ($MANIFEST missing)" >&2; exit 2; }
    while IFS= read -r f; do
      [ ! -e "$f" ] || { echo "slim_tree.sh: $f is back in the tree already; left $HOLD/$f, stopped" >&2; exit 2; }
    done < "$MANIFEST"
    n=$(move_listed "$MANIFEST" "$HOLD/" "")
    rm -f "$MANIFEST"
    ! grep -qs "$MARK" "$HOOK" || rm -f "$HOOK"
    echo "slim_tree.sh: $n file(s) back in the tree"
    ;;
  status)
    if [ -e "$MANIFEST" ]; then echo "out: $(wc -l < "$MANIFEST") file(s) in $HOLD"; else echo "out: none"; fi
    echo "a call carries $(($(carried_bytes) / 1048576)) MiB plus its carry paths (64 MiB in all)"
    ;;
  *)
    echo "usage: scripts/device/slim_tree.sh out|in|status" >&2
    exit 2
    ;;
esac
