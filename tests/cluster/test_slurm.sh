#!/usr/bin/env bash
# ctest `slurm` (docs/cluster.md): the cluster scripts on a real one-node Slurm started here
# (scripts/cluster/local_slurm.sh: munged, slurmctld, slurmd on the loopback address).
#
# Collection: a 16-group plan of real catalogue kernels, measured by the fake GPU backend, split
# into 4 parts and submitted as a 4-task array (scripts/cluster/submit_collect.sh). While they run:
# task 2 is preempted (USR1 to its batch shell, as --signal=B:USR1@... does near the time limit:
# clean stop, checkpoint, self-requeue), task 3 is requeued from outside (scontrol requeue:
# SIGTERM), task 4 is killed outright (SIGKILL) and its node-local registry deleted (a lost node)
# before it is requeued. The dependent job merges and packs. Asserted: every candidate of the plan
# has exactly one final row, no row is outside the plan, every interrupted task restarted and
# resumed from its checkpoint, the shard holds what the merge holds.
#
# Tuning: a tiny ridge study in Optuna's journal file, 2 workers as an array
# (scripts/cluster/submit_tune.sh); worker 1 is preempted mid-trial (USR1), worker 0 killed
# outright mid-trial and requeued. Asserted: the study ends with its COMPLETE trials, none left
# RUNNING or WAITING, every failed trial queued again with the same parameters and completed, and
# the default configuration's value equal to a direct `cks eval`.
#
#   bash tests/cluster/test_slurm.sh BUILD_BIN_DIR
# Exit 77 (skip) when Slurm, munge or Optuna are missing, except in CI (CI=true): there it fails.
set -uo pipefail
BIN=${1:?usage: test_slurm.sh BUILD_BIN_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CKS="$BIN/cks"
T0=$(date +%s)

say() { echo "[test_slurm +$(($(date +%s) - T0))s] $*"; }
fail() { say "FAIL: $*"; exit 1; }
skip() {
  if [ "${CI:-}" = true ]; then fail "cannot run in CI: $*"; fi
  say "SKIP: $*"
  exit 77
}

[ -x "$CKS" ] || fail "no cks at $CKS"
command -v sqlite3 >/dev/null || skip "sqlite3 not found"
python3 -c 'import optuna' 2>/dev/null || skip "Optuna not installed (python3 -m pip install -r scripts/requirements.txt)"
W=$(mktemp -d "${TMPDIR:-/tmp}/cks-slurm-XXXXXX")
cleanup() {
  bash "$ROOT/scripts/cluster/local_slurm.sh" stop "$W/cluster" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then say "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
bash "$ROOT/scripts/cluster/local_slurm.sh" start "$W/cluster" 8
rc=$?
[ "$rc" = 77 ] && skip "no local Slurm (see above)"
[ "$rc" = 0 ] || fail "the local Slurm did not start (logs: $W/cluster/log)"
# shellcheck disable=SC1091
. "$W/cluster/env.sh"
export CKS_CORPUS_CACHE="$W/corpus-cache" CKS_LOCAL_DIR="$W/local"

# Waits up to $1 s for the command "$2..." to succeed.
wait_for() {
  local limit=$1
  shift
  local end=$(($(date +%s) + limit))
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.5
  done
}
job_state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
restarts() { scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*' | head -1 | cut -d= -f2; }
is_state() { [ "$(job_state "$1")" = "$2" ]; }
job_id() { scontrol show job "$1" 2>/dev/null | grep -o 'JobId=[0-9]*' | head -1 | cut -d= -f2; }
# The processes of a job on this node (the local cluster's only node).
job_pids() { scontrol listpids "$(job_id "$1")" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}'; }
no_pids() { [ -z "$(job_pids "$1")" ]; }
# A requeued job waits ~2 min (its BeginTime) before it may start again, which also lets its
# last instance end everywhere. Here: once that instance's processes are gone, start it now.
release() {
  wait_for 60 is_state "$1" PENDING || fail "$1 is not pending after its requeue ($(job_state "$1"))"
  wait_for 60 no_pids "$1" || fail "$1: its last instance is still running"
  sleep 2
  scontrol update JobId="$1" StartTime=now
}
# Kills every process of a job outright (SIGKILL: no handler runs, as when a node is lost).
kill_job() {
  local pids
  pids=$(job_pids "$1")
  [ -n "$pids" ] || fail "$1 has no process to kill"
  # shellcheck disable=SC2086
  kill -KILL $pids
}
has_rows() { [ -f "$1" ] && [ "$(sqlite3 "file:$1?mode=ro" "SELECT count(*) FROM measurements WHERE kernel_id != 'cublas'" 2>/dev/null || echo 0)" -gt "${2:-0}" ]; }
dump_logs() { for f in "$W"/run/logs/*.log "$W"/tune/logs/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; }

# ------------------------------------------------------------------------------ collection
mkdir -p "$W/run"
"$CKS" plan make --set paper --layouts tn --limit-groups 16 --budget 24 --seed 3 --out "$W/plan.jsonl" ||
  fail "cks plan make"
planned=$("$CKS" plan show "$W/plan.jsonl" --format csv 2>/dev/null | tail -n +2 | awk -F, '{s += $9} END {print s}')
[ "$planned" -gt 300 ] || fail "the plan has $planned candidates"
say "plan: $planned candidates in 16 groups"
collect_args="--backend fake --fault slow=250000 --deadline 60 --heartbeat-timeout 30 --progress-every 0"
read -r array merge < <(bash "$ROOT/scripts/cluster/submit_collect.sh" --plan "$W/plan.jsonl" --parts 4 \
  --run-dir "$W/run" --cks "$CKS" --checkpoint-every 2 --collect-args "$collect_args")
[ -n "${merge:-}" ] || fail "submit_collect.sh submitted nothing"
say "collection array $array, merge job $merge"
for i in 1 2 3 4; do
  wait_for 90 is_state "${array}_$i" RUNNING || { dump_logs; fail "task $i not running ($(job_state "${array}_$i"))"; }
done
# Interrupt tasks 2, 3, 4 once they have checkpointed measurements.
for i in 2 3 4; do
  wait_for 90 has_rows "$W/run/registries/part$i.db" 5 || { dump_logs; fail "task $i has no checkpointed row"; }
done
say "preempting task 2 (USR1 to its batch shell)"
scancel --batch --signal=USR1 "${array}_2"
say "requeueing task 3 from outside (SIGTERM)"
scontrol requeue "${array}_3"
say "killing task 4 outright and deleting its node-local registry (a lost node)"
kill_job "${array}_4"
wait_for 60 bash -c "! scontrol show job ${array}_4 | grep -q JobState=RUNNING" || fail "task 4 still running"
rm -rf "$W/local/cks-collect-$array-4"
scontrol requeue "${array}_4" || fail "scontrol requeue of the killed task 4"
for i in 2 3 4; do release "${array}_$i"; done
wait_for 240 bash -c "scontrol show job $merge | grep -Eq 'JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT)'" ||
  { dump_logs; fail "the merge job did not end"; }
[ "$(job_state "$merge")" = COMPLETED ] || { dump_logs; fail "merge job $(job_state "$merge")"; }
for i in 2 3 4; do
  [ "$(restarts "${array}_$i")" -ge 1 ] || fail "task $i did not restart"
  grep -q "resuming from the checkpoint" "$W/run/logs/collect_$i.log" || { dump_logs; fail "task $i did not resume from its checkpoint"; }
done
grep -q "requeueing this task" "$W/run/logs/collect_2.log" || { dump_logs; fail "task 2 did not requeue itself"; }
grep -q "stopped early (signal)" "$W/run/logs/collect_3.log" || { dump_logs; fail "task 3's cks collect did not stop cleanly"; }
say "collection done: tasks 2-4 restarted and resumed"

db="$W/run/registries/merged.db"
q() { sqlite3 "file:$db?mode=ro" "$1"; }
[ "$(q 'SELECT count(*) FROM plan_items')" = "$planned" ] || fail "merged plan items $(q 'SELECT count(*) FROM plan_items') != $planned"
candidates=$(q "SELECT count(*) FROM (SELECT DISTINCT group_key, kernel_id, knobs FROM measurements WHERE kernel_id != 'cublas')")
[ "$candidates" = "$planned" ] || fail "$candidates candidates measured, $planned planned"
not_one=$(q "SELECT count(*) FROM (SELECT sum(status NOT IN ('crash', 'timeout')) AS final FROM measurements
             WHERE kernel_id != 'cublas' GROUP BY group_key, kernel_id, knobs) WHERE final != 1")
[ "$not_one" = 0 ] || fail "$not_one candidates without exactly one final row"
outside=$(q "SELECT count(*) FROM measurements m WHERE kernel_id != 'cublas' AND NOT EXISTS (SELECT 1 FROM plan_items p
             WHERE p.group_key = m.group_key AND p.kernel_id = m.kernel_id AND p.knobs = m.knobs)")
[ "$outside" = 0 ] || fail "$outside rows outside the plan"
runs=$(q "SELECT count(*) FROM runs")
[ "$runs" -ge 7 ] || fail "$runs runs (4 tasks + 3 restarts expected)"
attempts=$(q "SELECT count(*) FROM measurements")
shards=$(ls "$W/run/shards"/*.db.?z 2>/dev/null | wc -l)
[ "$shards" = 1 ] || fail "$shards shards packed"
stats=$("$CKS" data stats --data "$W/run/shards" --format csv) || fail "cks data stats on the shard"
echo "$stats" | grep -qx "measurements.attempts,$attempts" || fail "the shard does not hold the merge's $attempts attempts"
say "collection ok: $planned candidates, each with one final row; $attempts attempts in $runs runs; shard packed"

# ------------------------------------------------------------------------------ tuning
# A cks that takes 3 s more per call: trials long enough to be interrupted mid-way.
mkdir -p "$W/tune"
printf '#!/bin/sh\nsleep 3\nexec "%s" "$@"\n' "$CKS" > "$W/tune/slow-cks"
chmod +x "$W/tune/slow-cks"
storage="journal:$W/tune/studies.log"
tarray=$(bash "$ROOT/scripts/cluster/submit_tune.sh" --arm ridge --trials 6 --workers 2 --storage "$storage" \
  --cks "$W/tune/slow-cks" -- --registry "$db" --folds 2 --cv-max-groups 16 --cv-max-candidates 30 --heartbeat 2) ||
  fail "submit_tune.sh"
say "tuning array $tarray"
completed() {
  local n
  n=$(grep -c "complete [0-9]*/6" "$W/tune/logs/tune_$1.log" 2>/dev/null)
  [ "${n:-0}" -ge "$2" ]
}
wait_for 120 completed 1 1 || { dump_logs; fail "worker 1 completed no trial"; }
sleep 1
say "preempting worker 1 mid-trial (USR1)"
scancel --batch --signal=USR1 "${tarray}_1"
wait_for 120 completed 0 1 || { dump_logs; fail "worker 0 completed no trial"; }
sleep 1
say "killing worker 0 outright mid-trial"
kill_job "${tarray}_0"
wait_for 60 bash -c "! scontrol show job ${tarray}_0 | grep -q JobState=RUNNING" || fail "worker 0 still running"
scontrol requeue "${tarray}_0" || fail "scontrol requeue of the killed worker 0"
release "${tarray}_1"
release "${tarray}_0"
wait_for 240 bash -c "for t in 0 1; do scontrol show job ${tarray}_\$t | grep -Eq 'JobState=(COMPLETED|FAILED|CANCELLED)' || exit 1; done" ||
  { dump_logs; fail "the tuning workers did not end"; }
for t in 0 1; do
  [ "$(job_state "${tarray}_$t")" = COMPLETED ] || { dump_logs; fail "worker $t $(job_state "${tarray}_$t")"; }
  [ "$(restarts "${tarray}_$t")" -ge 1 ] || fail "worker $t did not restart"
done
python3 - "$W/tune/studies.log" "$CKS" "$db" <<'EOF' || { dump_logs; fail "the study is not consistent"; }
import json, subprocess, sys
import optuna
from optuna.storages import JournalStorage
try:
    from optuna.storages.journal import JournalFileBackend as Backend
except ImportError:
    from optuna.storages import JournalFileStorage as Backend
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.load_study(study_name="ridge", storage=JournalStorage(Backend(sys.argv[1])))
trials = study.get_trials(deepcopy=False)
states = {}
for t in trials:
    states[t.state.name] = states.get(t.state.name, 0) + 1
print("trials:", states)
assert states.get("COMPLETE", 0) >= 6, states
assert states.get("RUNNING", 0) == 0 and states.get("WAITING", 0) == 0, states
by_number = {t.number: t for t in trials}
for t in trials:
    if t.state.name != "FAIL":
        continue
    retries = [r for r in trials if t.number in r.system_attrs.get("retry_history", [])]
    assert retries, f"failed trial {t.number} was not queued again"
    assert all(r.params == t.params for r in retries), f"trial {t.number} retried with other parameters"
    assert any(r.state.name == "COMPLETE" for r in retries), f"no retry of trial {t.number} completed"
fails = states.get("FAIL", 0)
assert fails >= 1, "no trial was interrupted mid-way"
default = [t for t in trials if t.user_attrs.get("enqueued") == "default configuration" and t.state.name == "COMPLETE"]
assert default, "the default configuration did not complete"
proto = study.user_attrs["protocol"]
argv = [sys.argv[2], "eval", "--registry", sys.argv[3], "--groups", "cv", "--folds", str(proto["folds"]),
        "--cv-max-groups", str(proto["cv_max_groups"]), "--cv-max-candidates", str(proto["cv_max_candidates"]),
        "--cv-keep-top", str(proto["cv_keep_top"]), "--threads", str(proto["threads"]), "--seed", str(proto["seed"]),
        "--no-baselines", "--format", "json", "--model", "ridge", "--lambda", "1.0"]
rows = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
direct = next(r for r in rows if r["slice"] == "all")["regret_mean"]
assert abs(direct - default[0].value) < 1e-12, (direct, default[0].value)
print(f"study ok: {fails} interrupted trials retried with the same parameters; default trial {default[0].value} == direct cks eval")
EOF
say "tuning ok"
say "PASS"
