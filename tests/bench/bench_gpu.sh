#!/usr/bin/env bash
# bench_gpu.sh - GPU executor figures on one GPU (needs a CUDA device):
# reduction kernels as a fraction of peak memory bandwidth (target >= 80 %),
# and collstep's allreduce engine against ncclAllReduce.  Not a ctest.
#   tests/bench/bench_gpu.sh [build-dir] [max-bytes] [iters]
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build} max=${2:-268435456} iters=${3:-20}
cmake --build "$b" --target bench_gpu >/dev/null
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv,noheader 2>/dev/null || true
"$b/tests/bench/bench_gpu" "$max" "$iters"
