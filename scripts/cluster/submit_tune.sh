#!/usr/bin/env bash
# The tuning studies on a Slurm cluster (docs/cluster.md): prepares the arm's study in Optuna's
# journal file on shared storage (`tune.py --prepare`: its protocol, the registry its trials read,
# the default configuration as first trial), then submits W workers as a job array
# (tune_array.sbatch). Prints the array's job id.
#
#   scripts/cluster/submit_tune.sh --arm ARM --trials N --workers W --storage journal:/shared/studies.log
#       [--cks PATH] [-- TUNE_OPTIONS... [-- SBATCH_OPTIONS...]]
#
# TUNE_OPTIONS are tune.py's protocol options (--registry, --folds, --cv-max-groups, ...: given to
# --prepare) and worker options (--heartbeat, --trial-timeout, --timeout: given to the workers).
# The registry (default build/hpo/registry.db, merged from data/shards) and the repository must
# be on storage every node sees. Afterwards: python3 scripts/hpo/tune.py --report --storage ...
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
arm="" trials="" workers="" storage="" cks="$ROOT/build/bin/cks"
while [ $# -gt 0 ]; do
  case "$1" in
    --arm) arm=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --storage) storage=$2; shift 2 ;;
    --cks) cks=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "submit_tune: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$arm" ] && [ -n "$trials" ] && [ -n "$workers" ] && [ -n "$storage" ] || usage
case "$storage" in journal:*) ;; *) echo "submit_tune: --storage must be journal:PATH (a file on shared storage)" >&2; exit 1 ;; esac
command -v sbatch >/dev/null || { echo "submit_tune: sbatch not found (not a Slurm login node?)" >&2; exit 1; }
tune_opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do tune_opts+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
# Worker options go to the array tasks; the rest (the protocol) only to --prepare.
worker_opts=()
for ((i = 0; i < ${#tune_opts[@]}; i++)); do
  case "${tune_opts[$i]}" in
    --heartbeat|--trial-timeout|--timeout|--sampler-seed) worker_opts+=("${tune_opts[$i]}" "${tune_opts[$((i + 1))]}") ;;
  esac
done

python3 scripts/hpo/tune.py --prepare --arm "$arm" --storage "$storage" --trials "$trials" --cks "$cks" "${tune_opts[@]}"
export CKS_ROOT="$ROOT" CKS="$cks" CKS_ARM="$arm" CKS_STORAGE="$storage" CKS_TRIALS="$trials"
export CKS_TUNE_ARGS="${worker_opts[*]:-}"
# Logs beside the journal file (sbatch options given after -- come later and win).
logs="$(dirname "${storage#journal:}")/logs"
mkdir -p "$logs"
array=$(sbatch --parsable --array="0-$((workers - 1))" --chdir="$ROOT" --output="$logs/tune_%a.log" "$@" \
  "$ROOT/scripts/cluster/tune_array.sbatch")
array=${array%%;*}
echo "submit_tune: array job $array ($workers workers of $arm); logs in $logs" >&2
echo "$array"
