# Sourced by the plan scripts of scripts/corpus: a scratch directory $TMP (removed on exit) and
# the registry the plan commands read, SRC=(--registry ...): $REG, a registry merged from
# data/shards beforehand (saves the merge every call repeats), else a merge of data/shards into
# $TMP. Needs $CKS.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -n "${REG:-}" ]; then SRC=(--registry "$REG"); else
  "$CKS" data merge --out "$TMP/corpus.db" data/shards > /dev/null
  SRC=(--registry "$TMP/corpus.db")
fi
