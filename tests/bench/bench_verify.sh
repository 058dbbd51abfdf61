#!/usr/bin/env bash
# bench_verify.sh - generate + verify at scale (issue #2 target: ring
# allreduce on 1536 ranks in < 2 s and < 1 GiB).  Not a ctest: run by hand.
#   tests/bench/bench_verify.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
cmake --build "$b" --target bench_verify >/dev/null
"$b"/tests/bench/bench_verify allreduce ring 1536
"$b"/tests/bench/bench_verify allreduce rhd 1536
"$b"/tests/bench/bench_verify allreduce hier 1536 dims=6x256
