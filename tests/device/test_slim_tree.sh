#!/usr/bin/env bash
# scripts/device/slim_tree.sh on a scratch git repository: `out` moves the large tracked files
# out and guards commits (a commit that deletes them is refused), `in` brings them back byte for
# byte and drops the guard; a second `out` and an `in` over a returned file are refused.
. "$(dirname "$0")/scratch.sh"
mkdir -p "$R/scripts/device" "$R/data/shards"
cp "$SRC/scripts/device/slim_tree.sh" "$R/scripts/device/"
cd "$R"
git init -q . && git config user.email t@example.com && git config user.name t
head -c 600000 /dev/urandom > data/shards/big.db.gz
head -c 1000 /dev/urandom > data/small.txt
head -c 600000 /dev/urandom | base64 > NOTES.md
head -c 600000 /dev/urandom > data/edited.bin
git add -A && git commit -qm init
echo "an uncommitted edit" >> data/edited.bin
sum=$(sha256sum data/shards/big.db.gz | cut -d' ' -f1)
HOLD=$T/hold bash scripts/device/slim_tree.sh out > "$T/out.log"
[ ! -e data/shards/big.db.gz ] || fail "the large file is still in the tree"
[ -e data/small.txt ] || fail "the small file was moved"
[ -e NOTES.md ] || fail "a Markdown file was moved"
[ -e data/edited.bin ] || fail "a file with uncommitted changes was moved"
[ -e "$T/hold/data/shards/big.db.gz" ] || fail "the large file is not in the hold"
if HOLD=$T/hold bash scripts/device/slim_tree.sh out 2> /dev/null; then fail "a second out was accepted"; fi
git add data/edited.bin && git commit -qm "the edit" || fail "committing the edit failed"
echo x >> data/small.txt
if git commit -qam "would delete the corpus" 2> /dev/null; then fail "a commit deleting the moved files was accepted"; fi
git reset -q
git add data/small.txt && git commit -qm "an honest change" || fail "a commit without deletions was refused"
st=$(HOLD=$T/hold bash scripts/device/slim_tree.sh status)
[[ $st == *"out: 1 file"* ]] || fail "status does not list the file: $st"
HOLD=$T/hold bash scripts/device/slim_tree.sh in > "$T/in.log"
[ "$(sha256sum data/shards/big.db.gz | cut -d' ' -f1)" = "$sum" ] || fail "the large file came back changed"
[ ! -e "$(git rev-parse --git-path hooks)/pre-commit" ] || fail "the guard is still installed"
[ -z "$(git status --porcelain)" ] || fail "the tree is not clean after in: $(git status --porcelain)"
if HOLD=$T/hold bash scripts/device/slim_tree.sh in 2> /dev/null; then fail "an in with nothing out was accepted"; fi
HOLD=$T/hold bash scripts/device/slim_tree.sh out > /dev/null
cp "$T/hold/data/shards/big.db.gz" data/shards/big.db.gz
if HOLD=$T/hold bash scripts/device/slim_tree.sh in 2> /dev/null; then fail "in over a returned file was accepted"; fi
echo "slim_tree: 1 passed, 0 failed"
