#!/usr/bin/env bash
# scripts/device/compile_ids.sh on a scratch tree, with a fake `cks build` (it writes one library
# per ID into build/kernel-cache, a second apart): a missing IDS file is refused (exit 2); a build
# cut by BUDGET_S exits 124 and still ships what it built (kcache.tar.xz.part-* that unpack to the
# finished libraries); a build that ends exits 0 and ships every library.
. "$(dirname "$0")/scratch.sh"
mkdir -p "$R/scripts/device" "$R/fakebin"
cp "$SRC/scripts/device/compile_ids.sh" "$SRC/scripts/device/device_env.sh" "$SRC/scripts/device/lease.sh" "$R/scripts/device/"
cat > "$R/fakebin/cks" <<'FAKE'
#!/usr/bin/env bash
[ "$1" = build ] || exit 9
ids=""; cache=""
while [ $# -gt 0 ]; do case $1 in --ids-file) ids=$2; shift ;; --cache) cache=$2; shift ;; esac; shift; done
while read -r id; do
  sleep 1
  head -c 1000 /dev/urandom > "$cache/.tmp_$id" && mv "$cache/.tmp_$id" "$cache/cks_$id.so"
  echo "$id,ok"
done < "$ids"
FAKE
chmod +x "$R/fakebin/cks"
cd "$R"
printf 'a%015d\n' 1 2 3 4 5 6 7 8 > ids.txt

set +e
OUT=$T/o0 IDS=missing.txt BIN=fakebin bash scripts/device/compile_ids.sh > "$T/log0" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "a missing IDS file: exit $rc, not 2"
grep -q "no IDS file 'missing.txt'" "$T/log0" || fail "a missing IDS file: no clear message"

set +e
OUT=$T/o1 IDS=ids.txt BIN=fakebin BUDGET_S=3 bash scripts/device/compile_ids.sh > "$T/log1" 2>&1; rc=$?
set -e
[ "$rc" = 124 ] || fail "a build cut at its budget: exit $rc, not 124"
grep -q "cks build status 124" "$T/o1/compile_info.txt" || fail "the budget stop is not in compile_info.txt"
mkdir "$T/u1" && cat "$T"/o1/kcache.tar.xz.part-* | tar -xJf - -C "$T/u1"
n1=$(ls "$T"/u1/kernel-cache/*.so | wc -l)
[ "$n1" -ge 1 ] && [ "$n1" -lt 8 ] || fail "a cut build shipped $n1 libraries (expected 1-7)"
[ -z "$(ls -A "$T"/u1/kernel-cache | grep tmp || true)" ] || fail "a partial library was shipped"

OUT=$T/o2 IDS=ids.txt BIN=fakebin BUDGET_S=60 bash scripts/device/compile_ids.sh > "$T/log2" 2>&1 ||
  fail "a finished build did not exit 0: $(tail -3 "$T/log2")"
mkdir "$T/u2" && cat "$T"/o2/kcache.tar.xz.part-* | tar -xJf - -C "$T/u2"
[ "$(ls "$T"/u2/kernel-cache/*.so | wc -l)" = 8 ] || fail "a finished build did not ship its 8 libraries"
grep -q "libraries now 8" "$T/o2/compile_info.txt" || fail "compile_info.txt does not count the libraries"
echo "compile_ids: ok"
