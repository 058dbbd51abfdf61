#!/usr/bin/env bash
# bench_sim.sh - speed of the SimGrid backend (not a ctest: run by hand).
#
#   tests/bench/bench_sim.sh [build-dir] [nodes]
#
# 1. `collstep sim` ring allreduce, summit (default 256 nodes = 1536 GPUs),
#    100 MB, ideal model: wall time and peak RSS (/usr/bin/time -v);
# 2. the bare SimGrid ring (tests/bench/sim_bare_ring.c: the same puts and
#    gets, same platform, same model flags, no step graph, no reductions),
#    measured in the same run; prints engine / bare (target <= 1.10);
# 3. `collstep sim` hier allreduce on the same platform (target < 5 s).
# Both simulated times are printed too: they must agree within the cost of
# the reductions (the bare ring does none).
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
nodes=${2:-256}
plat="summit:nodes=$nodes"
cmake --build "$b" --target collstep sim_bare_ring >/dev/null

measure() { # LABEL COMMAND... -> "LABEL wall_s rss_MB", output kept in $out
  local label=$1; shift
  local log
  log=$(mktemp)
  /usr/bin/time -v "$@" >"$log.out" 2>"$log"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$log")
  out=$(cat "$log.out")
  rm -f "$log" "$log.out"
  printf '%-28s wall %8.2f s  peak RSS %6s MB\n' "$label" "$wall" "$rss"
}

measure "collstep sim ring" "$b"/cli/collstep sim --platform "$plat" --algo ring --size 100M --format csv --no-verify
engine_wall=$wall
echo "  $(echo "$out" | tail -1)"
measure "bare SimGrid ring" "$b"/tests/bench/sim_bare_ring "$plat" 104857600
bare_wall=$wall
echo "  $out"
awk -v e="$engine_wall" -v b="$bare_wall" 'BEGIN { printf "engine / bare ring: %.3f (target <= 1.10)\n", e / b }'
measure "collstep sim hier" "$b"/cli/collstep sim --platform "$plat" --algo hier --size 100M --format csv --no-verify
echo "  $(echo "$out" | tail -1)  (target < 5 s)"
