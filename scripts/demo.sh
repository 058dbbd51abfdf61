#!/usr/bin/env bash
# demo.sh - the main job: set everything up, simulate an allreduce of 100 MB on
# the embedded Summit-like machine (256 nodes x 6 V100 = 1536 GPUs, dual-rail
# EDR fat tree) with ring, recursive halving-doubling, double binary tree and
# the hierarchical (BlueConnect / PowerAI DDL style, 6x256) algorithms, print
# the nccl-tests style result table, write the per-tier utilization traces
# (out/summit/<algo>-<bytes>/: trace.json for ui.perfetto.dev, links.csv,
# tiers.csv, summary.json, utilization.png) and print their per-tier summary.
#
#   CS_DEMO_OUT=dir       where traces go (default out/summit)
#   CS_DEMO_SIZE=100M     message size
#   CS_DEMO_ALGOS=...     algorithms (default ring,rhd,dbtree,hier)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=${CS_DEMO_OUT:-out/summit}
size=${CS_DEMO_SIZE:-100M}
algos=${CS_DEMO_ALGOS:-ring,rhd,dbtree,hier}
cs=build/cli/collstep

mkdir -p "$(dirname "$out")"

"$cs" sim --platform summit --coll allreduce --algo "$algos" --size "$size" --trace "$out" --force
echo
"$cs" trace "$out" --links 3
echo
echo "traces written to $out/ (open */trace.json in ui.perfetto.dev; plots in */utilization.png)"
