#!/bin/sh
# Build and run the schedule-parser fuzzer (libFuzzer + ASan + UBSan).
#
#   tests/fuzz/run.sh [SECONDS] [OUTDIR]   fuzz for SECONDS (default 60) over
#                                         tests/fuzz/corpus and the golden
#                                         files; new inputs go to OUTDIR/work,
#                                         crashes to OUTDIR/crash-* (exit != 0)
#   tests/fuzz/run.sh merge [OUTDIR]       minimise: rebuild tests/fuzz/corpus
#                                         from itself plus OUTDIR/work
#
# OUTDIR defaults to build-fuzz at the top of the repository.  Exits 77
# (skipped) when clang or libFuzzer is missing.  CLANG=... picks the compiler.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fuzz_common.sh"
fuzz_init "$@"

# The rank limit is lowered so a 20-byte input cannot make every run
# allocate a million ranks (the parser's behaviour is otherwise unchanged).
# shellcheck disable=SC2046
"$cc" $(fuzz_cflags) -DCS_TEXT_MAX_RANKS=4096 -I"$root/core" -I"$root/tests/text" \
    "$here/fuzz_parse.c" "$root/core/cs_text.c" "$root/core/cs_text_read.c" "$root/core/cs_text_lex.c" "$root/core/cs_text_group.c" "$root/core/cs_text_write.c" \
    "$root/core/cs_sched.c" "$root/core/cs_sched_group.c" "$root/core/cs_status.c" "$root/core/cs_grow.c" -o "$out/fuzz_parse"

fuzz_go "$out/fuzz_parse" "$here/schedule.dict" 4096 "$here/corpus" "$out/work" "$out/" \
    "$root/tests/text/golden"
