#!/usr/bin/env bash
# A collection on a Slurm cluster (docs/cluster.md): splits a plan into N parts of about equal
# estimated GPU time (`cks plan split`), submits one job-array task per part
# (collect_array.sbatch: node-local registry, checkpoints to shared storage, requeue on
# preemption) and a job that runs after the whole array to merge and pack
# (merge_pack.sbatch). Prints the two job ids.
#
#   scripts/cluster/submit_collect.sh --plan PLAN --parts N --run-dir DIR [--cks PATH]
#       [--collect-args "OPTIONS"] [--shards DIR] [--pack-parts P] [--checkpoint-every S]
#       [-- SBATCH_OPTIONS...]          # e.g. -- --partition=gpu --gres=gpu:1 --time=4:00:00
#
# DIR must be on storage that every node sees; so must PATH (default build/bin/cks).
# SBATCH_OPTIONS go to the array's sbatch; the merge job gets --partition/--account/--qos/
# --time from CKS_MERGE_SBATCH if set (it needs no GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
plan="" parts="" run_dir="" cks="$ROOT/build/bin/cks" collect_args="" shard_dir="" pack_parts=1 every=300
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) plan=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    --run-dir) run_dir=$2; shift 2 ;;
    --cks) cks=$2; shift 2 ;;
    --collect-args) collect_args=$2; shift 2 ;;
    --shards) shard_dir=$2; shift 2 ;;
    --pack-parts) pack_parts=$2; shift 2 ;;
    --checkpoint-every) every=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "submit_collect: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$plan" ] && [ -n "$parts" ] && [ -n "$run_dir" ] || usage
[ -f "$plan" ] || { echo "submit_collect: no plan '$plan'" >&2; exit 1; }
[ -x "$cks" ] || { echo "submit_collect: no cks at '$cks' (build first: bash scripts/setup.sh)" >&2; exit 1; }
command -v sbatch >/dev/null || { echo "submit_collect: sbatch not found (not a Slurm login node?)" >&2; exit 1; }

mkdir -p "$run_dir/parts" "$run_dir/registries" "$run_dir/logs"
run_dir=$(cd "$run_dir" && pwd)
cks=$(cd "$(dirname "$cks")" && pwd)/$(basename "$cks")
stem=$(basename "$plan" .jsonl)
"$cks" plan split "$plan" --parts "$parts" --out-dir "$run_dir/parts" --format md >&2

export CKS="$cks" CKS_RUN_DIR="$run_dir" CKS_PLAN_STEM="$stem" CKS_PARTS="$parts" CKS_COLLECT_ARGS="$collect_args"
export CKS_CHECKPOINT_EVERY="$every" CKS_PACK_PARTS="$pack_parts"
[ -n "$shard_dir" ] && export CKS_SHARD_DIR="$shard_dir"
array=$(sbatch --parsable --array="1-$parts" --output="$run_dir/logs/collect_%a.log" --chdir="$run_dir" "$@" \
  "$ROOT/scripts/cluster/collect_array.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086  # CKS_MERGE_SBATCH is a list of options
merge=$(sbatch --parsable --dependency="afterany:$array" --kill-on-invalid-dep=yes --output="$run_dir/logs/merge.log" \
  --chdir="$run_dir" ${CKS_MERGE_SBATCH:-} "$ROOT/scripts/cluster/merge_pack.sbatch")
merge=${merge%%;*}
echo "$array" > "$run_dir/array.jobid"
echo "$merge" > "$run_dir/merge.jobid"
echo "submit_collect: array job $array ($parts tasks), merge job $merge; logs in $run_dir/logs" >&2
echo "$array $merge"
