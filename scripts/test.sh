#!/usr/bin/env bash
# test.sh - set everything up and run the whole test suite:
#   1. install the Debian packages (scripts/setup.sh --deps),
#   2. release build with gcc in ./build and `ctest` over every label,
#   3. sanitizer build (address + undefined, leaks) with clang in ./build-asan
#      and `ctest` over the labels that exercise the core (unit, algorithms,
#      golden), less the `scale` tests (P = 1536 and 27,648, and the
#      nccl-tests sweeps of validate and calibrate: minutes under the
#      sanitizers).
# So each compiler CI knows (gcc 12, clang 14) builds, warnings as errors.
# Skipped tests (no GPU, no permission for namespaces) are reported by ctest
# as "Not Run"/skipped, never as passed.
#
#   CS_TEST_JOBS=N      parallel ctest jobs (default: number of cores)
#   CS_SKIP_ASAN=1      skip the sanitizer pass
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${CS_TEST_JOBS:-$(nproc)}

scripts/setup.sh --deps
CC=gcc CXX=g++ CS_BUILD_DIR=build scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${CS_SKIP_ASAN:-0}" != 1 ]; then
  CC=clang CXX=clang++ CS_BUILD_DIR=build-asan CS_BUILD_TYPE=Debug \
    CS_CMAKE_ARGS="-DCS_SANITIZE=ON -DCS_WITH_CUDA=OFF" scripts/setup.sh
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L 'unit|algorithms|golden' -LE scale
fi
