#!/usr/bin/env bash
# bench_plan_scale.sh [COLLSTEP] [SCALE_TEST] - the planner at scale
# (docs/planner.md):
#
#   1. the topology analysis of a 16,384-GPU preset (hgx-h100:nodes=2048)
#      from the platform's blocks: SimGrid's loading and the analysis, in
#      seconds (SCALE_TEST: the planner_links_scale test program, which also
#      checks the figures; default build/tests/planner/planner_links_scale);
#   2. one-size plans (allreduce 1 GiB, --budget 60, the default --jobs) of
#      HGX H100 at 128 nodes (1,024 GPUs) and GB200 NVL72 at 4 racks (288
#      GPUs): the choice, its busbw against the links' bound and against
#      NCCL's choice (the reference row, simulated under the same model),
#      wall seconds.
# PLANS overrides the platforms of 2 ("hgx-h100:nodes=16").
set -u
collstep=${1:-build/cli/collstep}
scale=${2:-build/tests/planner/planner_links_scale}
PLANS=${PLANS:-"hgx-h100:nodes=128 gb200-nvl72:racks=4"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the start"
if [ -x "$scale" ]; then
  "$scale" | grep -v "passed"
else
  echo "analysis: $scale not built"
fi
for plat in $PLANS; do
  start=$(date +%s.%N)
  "$collstep" plan --platform "$plat" --size 1G --budget 60 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  if [ $rc -ne 0 ]; then
    echo "$plat: collstep plan failed (exit $rc): $(tail -2 "$tmp/err")"
    continue
  fi
  printf '%s (%.1f s): %s\n' "$plat" "$wall" "$(grep -m1 '^size ' "$tmp/out")"
  grep -m1 '^# bound' "$tmp/out"
  grep -m1 '^# rings' "$tmp/out" | cut -c1-120
  grep -m1 '^nccl (reference)' "$tmp/out" || grep -m1 '^# nccl (reference)' "$tmp/out"
  grep -m1 '^# cut by' "$tmp/out" | cut -c1-120
done
