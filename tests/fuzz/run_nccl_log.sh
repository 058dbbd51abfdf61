#!/bin/sh
# Build and run the nccl-tests log reader fuzzer (libFuzzer + ASan + UBSan).
#
#   tests/fuzz/run_nccl_log.sh [SECONDS] [OUTDIR]   fuzz for SECONDS (default
#                                   60) over tests/fuzz/corpus_nccl_log and the
#                                   logs of tests/core/logs; new inputs go to
#                                   OUTDIR/work_nccl_log, crashes to
#                                   OUTDIR/nccl-log-crash-* (exit != 0)
#   tests/fuzz/run_nccl_log.sh merge [OUTDIR]   minimise: rebuild the corpus
#                                   from itself plus OUTDIR/work_nccl_log
#
# OUTDIR defaults to build-fuzz at the top of the repository.  Exits 77
# (skipped) when clang or libFuzzer is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fuzz_common.sh"
fuzz_init "$@"

# shellcheck disable=SC2046
"$cc" $(fuzz_cflags) -I"$root/core" \
    "$here/fuzz_nccl_log.c" "$root"/core/cs_nccl_log*.c \
    "$root/core/cs_status.c" "$root/core/cs_grow.c" "$root/core/cs_file.c" -lm \
    -o "$out/fuzz_nccl_log"

fuzz_go "$out/fuzz_nccl_log" "$here/nccl_log.dict" 8192 "$here/corpus_nccl_log" \
    "$out/work_nccl_log" "$out/nccl-log-crash-" "$root/tests/core/logs"
