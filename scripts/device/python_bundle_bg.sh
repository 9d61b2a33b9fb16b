#!/usr/bin/env bash
# scripts/device/python_bundle.sh in the background (setsid, like lease.sh's collect), so that the
# Python check's bundle compiles on the CPUs while a lease measures on the GPU, across commands of
# one warm machine (session 36: lease 45 and issue 17's bundle on one H200).
#
#   scripts/device/python_bundle_bg.sh start BUDGET_S [JOBS] [NICE]
#       starts python_bundle.sh (TOP=4 unless set) at nice NICE (default 10: the lease's own
#       compiles and its measuring thread come first); returns at once
#   scripts/device/python_bundle_bg.sh wait SECONDS
#       waits up to SECONDS for it; copies its log to $OUT; exit 0: the bundle is complete
#       (out/pybundle/bundle, which python_check.sh prefers), 3: still compiling or kernels left,
#       4: none was started on this machine (a fresh one), else python_bundle.sh's error status
set -uo pipefail
cd "$(dirname "$0")/../.."
DIR=out/pybundle_bg
case "${1:-}" in
  start)
    budget=${2:?python_bundle_bg.sh start BUDGET_S [JOBS] [NICE]} jobs=${3:-$(nproc)} nice_level=${4:-10}
    mkdir -p "$DIR"
    # OUT points python_bundle.sh's own outputs (log, the bundle's xz parts) into $DIR, not $OUT.
    setsid nohup env OUT="$DIR" BUDGET_S="$budget" JOBS="$jobs" TOP="${TOP:-4}" \
      nice -n "$nice_level" bash scripts/device/python_bundle.sh > "$DIR/stdout.log" 2>&1 < /dev/null &
    pid=$!
    echo "$pid" > "$DIR/pid"
    disown -a
    echo "python_bundle_bg.sh: python_bundle.sh started (pid $pid, budget ${budget} s, $jobs jobs, nice $nice_level)" >&2
    ;;
  wait)
    secs=${2:?python_bundle_bg.sh wait SECONDS}
    [ -f "$DIR/pid" ] || { echo "python_bundle_bg.sh: no bundle compile was started on this machine" >&2; exit 4; }
    pid=$(cat "$DIR/pid")
    end=$((SECONDS + secs))
    while kill -0 "$pid" 2> /dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 5; done
    [ -n "${OUT:-}" ] && { cp "$DIR/stdout.log" "$OUT/python_bundle_bg.log" 2> /dev/null; cp out/pybundle.log "$OUT/python_bundle.log" 2> /dev/null; }
    grep "settled" out/pybundle.log 2> /dev/null | tail -1 >&2
    if kill -0 "$pid" 2> /dev/null; then echo "python_bundle_bg.sh: still compiling" >&2; exit 3; fi
    tail -3 "$DIR/stdout.log" >&2
    # python_bundle.sh's status: 0 complete, 3 kernels left; its "complete" line is the proof.
    if grep -q "the bundle is complete" "$DIR/stdout.log"; then exit 0; fi
    if grep -q "kernels left" "$DIR/stdout.log"; then exit 3; fi
    exit 1
    ;;
  *)
    echo "usage: python_bundle_bg.sh start BUDGET_S [JOBS] [NICE] | wait SECONDS" >&2
    exit 2
    ;;
esac
