#!/usr/bin/env bash
# bench_gpu.sh - GPU executor figures on one GPU (needs a CUDA device):
# reduction kernels as a fraction of peak memory bandwidth (target >= 80 %),
# and collstep's one-rank engine (allreduce ring and dbtree, broadcast chain)
# against NCCL's own collective.  Not a ctest; scripts/gpu-check.sh runs it.
# Exits 77 with bench_gpu's reason where there is no GPU or driver.
#   tests/bench/bench_gpu.sh [build-dir] [max-bytes] [iters]
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build} max=${2:-268435456} iters=${3:-20}
cmake --build "$b" --target bench_gpu >/dev/null
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv,noheader 2>/dev/null || true
rc=0
"$b/tests/bench/bench_gpu" "$max" "$iters" || rc=$?
[ $rc = 3 ] && { echo "bench_gpu.sh: SKIP (no usable GPU)" >&2; exit 77; }
exit $rc
