#!/usr/bin/env bash
# demo.sh - the main job: set everything up, simulate an allreduce of 100 MB on
# the embedded Summit-like machine (256 nodes x 6 V100 = 1536 GPUs) with ring,
# recursive halving-doubling, double binary tree and the hierarchical
# (BlueConnect / PowerAI DDL style, 6x256) algorithms, print the nccl-tests
# style result table and write the per-tier traces of the hierarchical run.
#
#   CS_DEMO_OUT=dir     where traces go (default out/summit)
#   CS_DEMO_SIZE=100M   message size
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=${CS_DEMO_OUT:-out/summit}
size=${CS_DEMO_SIZE:-100M}
cs=build/cli/collstep

if "$cs" sim --help >/dev/null 2>&1; then
  trace_args=()
  if "$cs" sim --help 2>/dev/null | grep -q -- '--trace'; then
    trace_args=(--trace "$out")
  fi
  "$cs" sim --platform summit --coll allreduce --algo ring,rhd,dbtree,hier --size "$size" \
      "${trace_args[@]}"
  [ ${#trace_args[@]} -gt 0 ] && echo "traces written to $out/"
else
  # Without the simulator: generate, verify and cost the 1536-rank schedules.
  mkdir -p "$out"
  for algo in ring rhd hier; do
    params=()
    [ "$algo" = hier ] && params=(--param dims=6x256)
    "$cs" gen allreduce "$algo" --ranks 1536 "${params[@]}" -o "$out/$algo.sched"
    "$cs" verify "$out/$algo.sched"
    "$cs" stats "$out/$algo.sched" --size "$size" --latency 2us --bandwidth 12.2GB/s
  done
fi
