#!/usr/bin/env bash
# bench_trace.sh - tracing overhead and trace sizes (traces/ issue target:
# `collstep sim --trace` on the Summit 1536-GPU ring at 100 MB costs < 25%
# more wall time than without).  Not a ctest: run by hand.
#   tests/bench/bench_trace.sh [build-dir] [nodes] [size]
# Defaults: build, 256 nodes (1536 GPUs), 100M.  Prints wall time and peak
# memory with and without --trace, the overhead, the size of every trace
# file, and the hier allreduce's trace for comparison.  Exit 1 when the
# overhead is 25% or more.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
nodes=${2:-256}
size=${3:-100M}
cmake --build "$b" --target collstep >/dev/null
cs="$b/cli/collstep"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_trace.XXXXXX")
trap 'rm -rf "$work"' EXIT
plat="summit:nodes=$nodes"

run() { # label, then collstep arguments; prints wall s, cpu s (user+sys), peak KiB
    local label=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$cs" "$@" >"$work/$label.out"
    read -r e u s m <"$work/time"
    echo "$e $(echo "$u + $s" | bc -l) $m"
}

echo "# collstep sim --platform $plat --algo ring --size $size, with and without --trace"
echo "# (the machine is shared: the overhead is judged on wall time and shown on CPU time too)"
read -r t_plain c_plain m_plain < <(run plain sim --platform "$plat" --algo ring --size "$size")
read -r t_trace c_trace m_trace < <(run trace sim --platform "$plat" --algo ring --size "$size" \
    --trace "$work/ring")
over=$(echo "100 * ($t_trace - $t_plain) / $t_plain" | bc -l)
cover=$(echo "100 * ($c_trace - $c_plain) / $c_plain" | bc -l)
printf "%-22s %8.2f s wall %8.2f s cpu %8.0f MiB\n" "without --trace" "$t_plain" "$c_plain" \
    "$(echo "$m_plain/1024" | bc -l)"
printf "%-22s %8.2f s wall %8.2f s cpu %8.0f MiB\n" "with --trace" "$t_trace" "$c_trace" \
    "$(echo "$m_trace/1024" | bc -l)"
printf "%-22s %8.1f %% wall %8.1f %% cpu  (target < 25%%)\n" "tracing overhead" "$over" "$cover"
echo "# trace files (ring, default --trace-ranks 64, 1024 buckets)"
(cd "$work/ring" && ls -l --block-size=1 | awk 'NR>1 {printf "  %-18s %12d B\n", $9, $5}')
echo "  total               $(du -sb "$work/ring" | cut -f1) B"
[ -s "$work/ring/utilization.png" ] || echo "  (no utilization.png: is gnuplot installed?)"
"$cs" trace "$work/ring" --links 0

echo "# hier (dims from the platform) with --trace"
read -r t_hier c_hier m_hier < <(run hier sim --platform "$plat" --algo hier --size "$size" \
    --trace "$work/hier")
printf "%-22s %10.2f s %10.0f MiB\n" "hier with --trace" "$t_hier" "$(echo "$m_hier/1024" | bc -l)"
echo "  total               $(du -sb "$work/hier" | cut -f1) B"
"$cs" trace "$work/hier" --links 0
if [ "$(echo "$over < 25" | bc -l)" = 1 ]; then
    echo "PASS: tracing overhead ${over%.*}% < 25%"
else
    echo "FAIL: tracing overhead ${over%.*}% >= 25%"
    exit 1
fi
