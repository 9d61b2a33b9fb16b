#!/usr/bin/env bash
# A collection lease that outlives the 10-minute limit of one device command: `start` launches
# `cks collect` in its own session (setsid), so it keeps running between commands while the
# machine stays warm; each later command calls `wait`, which sleeps, then brings the newest
# consistent copy of the registry home through $OUT. Run on the H200 machine from the
# repository root, with binaries carried in .carry/bin and CUTLASS headers in third_party/cutlass.
#
#   scripts/device/lease.sh start PLAN[,PLAN2,...] TIME_BUDGET_S [GPUS] [JOBS] [MEM_GB] [KERNELS_PER_TU]
#       several plans run one after the other into the same registry and kernel cache, the
#       budget shared (each gets what the ones before left); their groups may be of any set
#   scripts/device/lease.sh wait SECONDS      # returns early once collect has ended; exits 3 at once
#       on a machine where no collect was started (the lease's machine was released between commands)
#   RESUME=REGISTRY scripts/device/lease.sh start ...   resumes from a shipped registry (carry it)
#   start refuses a GPU whose name lacks $EXPECT_GPU (default H200: the corpus is the H200's; exit 4)
#   [RESUME=REGISTRY] scripts/device/lease.sh go PLAN TIME_BUDGET_S WAIT_S [GPUS] [JOBS] [MEM_GB] [KPT]
#       the same command for every call of a lease: where this lease's collect runs or ran on the
#       machine, `wait WAIT_S`; on a fresh machine (the first call, or the machine was released
#       between calls), `start` (resuming from RESUME when that file exists) then `wait WAIT_S`.
#       Lease 27 lost its collector when the machine went back between two commands: with `go`
#       and the last shipped registry carried as RESUME, the next call picks the plan up anyway.
#   scripts/device/lease.sh leaders LAYOUT PLAN TIME_BUDGET_S WAIT_S [GPUS] [JOBS] [MEM_GB] [KPT]
#       after collect has ended, on the still-warm machine (kernel cache intact): the knob variants
#       around the leaders of LAYOUT's groups of set $SET (default eval) in this lease's registry
#       (`cks plan leaders`), then PLAN's remainder, as a new collect; then `wait WAIT_S`
#   scripts/device/lease.sh cache             the compiled libraries (build/kernel-cache, without
#       sources and logs) as kcache.tar.xz.part-* through $OUT, for the compile cache kept at home
#       (scripts/device/kcache.sh import); run it in a command of its own (8 files a command)
#   scripts/device/lease.sh sbs GROUPS_PLAN SET MODEL TIME_BUDGET_S WAIT_S [BASE_MODEL]
#       after collect has ended: a side-by-side round (`cks plan sidebyside --groups`) of groups
#       measured first in this lease (e.g. the held-out family set), as a new collect; then wait
#
# The live registry is node-local (out/registry.db); collect checkpoints it every 60 s through
# SQLite's backup API (out/checkpoint.db, temp file + rename). `wait` ships the final registry
# when collect has ended (re-read through SQLite, so a crash's WAL is not lost), else the last
# checkpoint. If the machine is lost between commands, the last shipped copy is what remains;
# the next lease resumes from it after it is merged into data/.
# CKS_GIT_SHA names the commit (the carried tree has no .git). CKS_COLLECT_EXTRA adds options to
# every collect, e.g. "--mem-per-kernel-gb 0.45" (each library's sidecar records its compile's
# peak memory, max_rss_mb: budget from that, not from a guess).
set -uo pipefail
BIN=${BIN:-.carry/bin}
OUTDIR=${OUT:-out/lease}
mkdir -p out "$OUTDIR"
. "$(dirname "$0")/device_env.sh"

ship() {  # $1: registry file to ship
  # Re-read through SQLite into a fresh file (a crashed writer's WAL is not lost), without plan
  # items (rebuilt from the plan's commands), then split into pieces under the 16 MiB a returned
  # file may hold: reassemble with `cat registry.db.xz.part-* | xz -d > registry.db` (xz where
  # the machine has it: a third smaller than gzip on registries; else registry.db.gz.part-*).
  rm -f out/ship.db "$OUTDIR"/registry.db.*.part-*
  local src=out/ship.db
  if ! "$BIN/cks" data merge --no-plan-items --out out/ship.db "$1" > /dev/null 2> out/ship.err; then
    cat out/ship.err
    src=$1
  fi
  "$BIN/cks" data stats --registry "$src" --format json > "$OUTDIR/stats.json" 2>&1
  # The copy travels without its secondary indexes (a merge at home rebuilds them): a third
  # less to carry through $OUT's 64 MiB a command.
  if [ "$src" = out/ship.db ] && command -v python3 > /dev/null; then
    python3 -c "import sqlite3; c = sqlite3.connect('out/ship.db'); c.execute('DROP INDEX IF EXISTS measurements_candidate'); c.execute('DROP INDEX IF EXISTS measurements_status'); c.execute('VACUUM'); c.close()" || true
  fi
  if command -v xz > /dev/null; then
    xz -T0 -6 -c "$src" | split -b 15m - "$OUTDIR/registry.db.xz.part-"
  else
    gzip -1 -c "$src" | split -b 15m - "$OUTDIR/registry.db.gz.part-"
  fi
  {
    echo "== machine"; cat out/machine.txt
    echo "== collect.out"; cat out/collect.out 2> /dev/null
    echo "== gpus now"
    nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw,utilization.gpu,memory.used --format=csv
    echo "== host now"; uptime; free -g
    echo "== kernel cache"; ls build/kernel-cache 2> /dev/null | grep -c '\.so$'
  } > "$OUTDIR/info.txt" 2>&1
  tail -c 3000000 out/collect.log > "$OUTDIR/collect.log" 2> /dev/null
  # nvcc's phase timings of every compile (CKS_NVCC_TIME_DIR, the compile profile of issue 20).
  [ -d out/nvcc_time ] && tar -cJf "$OUTDIR/nvcc_time.tar.xz" -C out nvcc_time 2> /dev/null
  # The counter study's profiles (scripts/device/profile.sh), when one runs beside collect.
  [ -d out/profile ] && tar -cJf "$OUTDIR/profile.tar.xz" -C out profile 2> /dev/null
  ls -la "$OUTDIR"
}

case "${1:-}" in
  start)
    PLAN=$2 BUDGET=$3 GPUS=${4:-0} JOBS=${5:-0} MEM=${6:-0} KPT=${7:-8}
    # RESUME=<registry> (e.g. a shipped checkpoint, carried): collect resumes from it (the plan's
    # candidates with a final row are skipped), on a fresh machine after a lost one.
    if [ -n "${RESUME:-}" ]; then
      [ -f "$RESUME" ] || { echo "lease.sh start: RESUME=$RESUME does not exist" >&2; exit 2; }
      [ -f out/registry.db ] && { echo "lease.sh start: out/registry.db exists; not overwritten by RESUME" >&2; exit 2; }
      cp "$RESUME" out/registry.db
    fi
    {
      date -u +%FT%TZ
      nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
      nvcc --version | tail -2
      echo "cores=$(nproc) $(grep -E 'MemTotal|MemAvailable' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"
      "$BIN/cks" hw --device 0 --format csv
    } > out/machine.txt 2>&1
    cat out/machine.txt
    # The corpus is one card's (the H200's), and a device call may land on another (one without
    # needs_h200 gets an H100 or an H200: session 34's last lease call ran on an H100 and its rows
    # were discarded). Refuse a GPU whose name lacks $EXPECT_GPU (default H200; EXPECT_GPU= takes
    # any card, e.g. with CKS_COLLECT_EXTRA="--backend fake" on a machine without one).
    EXPECT_GPU=${EXPECT_GPU-H200}
    if [ -n "$EXPECT_GPU" ]; then
      gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
      case "$gpu" in
        *"$EXPECT_GPU"*) ;;
        *) echo "lease.sh start: the GPU is '${gpu:-none}', not an $EXPECT_GPU: no collect (EXPECT_GPU= to allow any card)" >&2
           exit 4;;
      esac
    fi
    rm -f out/collect.rc
    export CKS_COLLECT_EXTRA=${CKS_COLLECT_EXTRA:-}  # e.g. "--backend fake" to rehearse without a GPU
    mkdir -p out/nvcc_time
    export CKS_NVCC_TIME_DIR=${CKS_NVCC_TIME_DIR:-$PWD/out/nvcc_time}
    setsid nohup bash -c '
      end=$(( $(date +%s) + $2 )); rc=0; : > out/collect.out; : > out/collect.log
      for plan in ${1//,/ }; do
        left=$(( end - $(date +%s) ))
        [ "$left" -gt 30 ] || break
        echo "== $plan ($left s left)" >> out/collect.log
        "$0" collect --plan "$plan" --registry out/registry.db --checkpoint out/checkpoint.db --checkpoint-every 60 \
          --time-budget "$left" --gpus "$3" --jobs "$4" --mem-limit-gb "$5" --kernels-per-tu "$6" \
          --cache-dir build/kernel-cache --cutlass-dir third_party/cutlass --progress-every 20 $CKS_COLLECT_EXTRA \
          >> out/collect.out 2>> out/collect.log
        rc=$?
        [ "$rc" = 0 ] || break
      done
      echo $rc > out/collect.rc' "$BIN/cks" "$PLAN" "$BUDGET" "$GPUS" "$JOBS" "$MEM" "$KPT" < /dev/null > /dev/null 2>&1 &
    echo "collect started in the background (pid $!)"
    ;;
  wait)
    # A machine released between two commands (idle for more than its 30 s) comes back bare: say
    # so at once instead of sleeping out the command (lease 19 lost 560 s of device time that way).
    if [ ! -f out/machine.txt ]; then
      echo "lease.sh wait: no collect was started on this machine (a fresh one: the lease's machine was released);" \
           "resume from the last shipped registry: RESUME=<registry.db> lease.sh start ..." >&2
      exit 3
    fi
    END=$(( $(date +%s) + ${2:-60} ))
    while [ "$(date +%s)" -lt "$END" ] && [ ! -f out/collect.rc ]; do sleep 5; done
    if [ -f out/collect.rc ]; then
      echo "collect ended with status $(cat out/collect.rc)"
      cat out/collect.out
      ship out/registry.db
    elif [ -f out/checkpoint.db ]; then
      echo "collect still running; shipping the last checkpoint"
      ship out/checkpoint.db
    else
      echo "collect still running; no checkpoint yet"
    fi
    tail -n 5 out/collect.log
    ;;
  go)
    [ $# -ge 4 ] || { echo "usage: $0 go PLAN TIME_BUDGET_S WAIT_S [GPUS] [JOBS] [MEM_GB] [KERNELS_PER_TU]" >&2; exit 2; }
    PLAN=$2 BUDGET=$3 WAIT=$4
    if [ -f out/machine.txt ]; then
      echo "lease.sh go: this machine's collect was started before: waiting" >&2
      "$0" wait "$WAIT"
      exit $?
    fi
    if [ -n "${RESUME:-}" ] && [ ! -f "$RESUME" ]; then
      echo "lease.sh go: no registry at RESUME=$RESUME: starting the plan afresh" >&2
      unset RESUME
    fi
    [ -n "${RESUME:-}" ] && echo "lease.sh go: a fresh machine: resuming from $RESUME" >&2
    "$0" start "$PLAN" "$BUDGET" "${5:-0}" "${6:-0}" "${7:-0}" "${8:-8}" && "$0" wait "$WAIT"
    ;;
  leaders)
    L=$2 PLAN=$3 BUDGET=$4 WAIT=$5
    if [ ! -f out/collect.rc ]; then echo "lease.sh leaders: collect is still running" >&2; exit 2; fi
    "$BIN/cks" plan leaders --registry out/registry.db --set "${SET:-eval}" --layouts "$L" --top 8 --out out/leaders.jsonl &&
      "$BIN/cks" plan merge --union --name "leaders_then_rest" --out out/leaders_then_rest.jsonl out/leaders.jsonl "$PLAN" ||
      exit 1
    "$0" start out/leaders_then_rest.jsonl "$BUDGET" "${6:-0,1}" "${7:-30}" "${8:-235}" "${9:-10}" > /dev/null &&
      "$0" wait "$WAIT"
    ;;
  cache)
    tar --exclude='*.cu' --exclude='*.log' --exclude='*.tmp*' -cf - -C build kernel-cache |
      xz -T0 -6 | split -b 15m - "$OUTDIR/kcache.tar.xz.part-"
    ls -la "$OUTDIR"
    ;;
  sbs)
    # After collect has ended, on the still-warm machine: the side-by-side round of groups first
    # measured in this lease (the held-out family set: its fastest kernels are known only now),
    # planned from this lease's registry with MODEL (and BASE_MODEL's first pick, if given), then
    # measured as a new collect; then `wait WAIT_S`. Its kernels are all in the kernel cache.
    # ROUND=R (default 1) names a later round of groups measured before (cks plan sidebyside --round).
    GROUPS_PLAN=$2 SET_NAME=$3 MODEL=$4 BUDGET=$5 WAIT=$6 BASE_MODEL=${7:-}
    if [ ! -f out/collect.rc ]; then echo "lease.sh sbs: collect is still running" >&2; exit 2; fi
    SBS=(--registry out/registry.db --groups "$GROUPS_PLAN" --set "$SET_NAME" --reps "${REPS:-4}" --round "${ROUND:-1}"
         --exhaustive-top 1 --static-top 1 --priority 0)
    "$BIN/cks" plan sidebyside "${SBS[@]}" --model "$MODEL" --pick-top 4 --other-top 1 --measured-top 3 --top 4 \
      --out out/sbs_new.jsonl || exit 1
    PLANS=(out/sbs_new.jsonl)
    if [ -n "$BASE_MODEL" ]; then
      "$BIN/cks" plan sidebyside "${SBS[@]}" --model "$BASE_MODEL" --methods deployed --pick-top 1 --measured-top 0 \
        --top 1 --out out/sbs_new_base.jsonl || exit 1
      PLANS+=(out/sbs_new_base.jsonl)
    fi
    "$BIN/cks" plan merge --union --name sbs_new --out out/sbs_new_all.jsonl "${PLANS[@]}" || exit 1
    cp out/collect.log "$OUTDIR/collect_main.log" 2> /dev/null
    "$0" start out/sbs_new_all.jsonl "$BUDGET" "${GPUS:-0}" "${JOBS:-16}" "${MEM:-120}" "${KPT:-10}" > /dev/null &&
      "$0" wait "$WAIT"
    ;;
  *)
    echo "usage: $0 start PLAN TIME_BUDGET_S [GPUS] [JOBS] [MEM_GB] [KERNELS_PER_TU] | wait SECONDS" \
         "| go PLAN TIME_BUDGET_S WAIT_S [GPUS] [JOBS] [MEM_GB] [KERNELS_PER_TU]" \
         "| leaders LAYOUT PLAN TIME_BUDGET_S WAIT_S [GPUS] [JOBS] [MEM_GB] [KERNELS_PER_TU]" \
         "| cache | sbs GROUPS_PLAN SET MODEL TIME_BUDGET_S WAIT_S [BASE_MODEL]" >&2
    exit 2
    ;;
esac
