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
root=$(cd "$here/../.." && pwd)
mode=${1:-60}
out=${2:-$root/build-fuzz}
cc=${CLANG:-clang}
mkdir -p "$out/work"

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: $cc not found"
    exit 77
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$out/probe.c"
if ! "$cc" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" >/dev/null 2>&1; then
    echo "SKIP: $cc cannot link libFuzzer (-fsanitize=fuzzer)"
    exit 77
fi

# The rank limit is lowered so a 20-byte input cannot make every run
# allocate a million ranks (the parser's behaviour is otherwise unchanged).
"$cc" -g -O1 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DCS_TEXT_MAX_RANKS=4096 -I"$root/core" -I"$root/tests/text" \
    "$here/fuzz_parse.c" "$root/core/cs_text.c" "$root/core/cs_text_read.c" "$root/core/cs_text_write.c" \
    "$root/core/cs_sched.c" "$root/core/cs_status.c" -o "$out/fuzz_parse"

# libFuzzer exits 77 on a crash by default: ctest would call that "skipped".
opts="-dict=$here/schedule.dict -max_len=4096 -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1"
if [ "$mode" = merge ]; then
    rm -rf "$out/merged" && mkdir -p "$out/merged"
    # shellcheck disable=SC2086
    "$out/fuzz_parse" $opts -merge=1 "$out/merged" "$here/corpus" "$out/work"
    find "$here/corpus" -type f -delete
    cp "$out/merged"/* "$here/corpus/"
    echo "corpus: $(ls "$here/corpus" | wc -l) files"
    exit 0
fi
# shellcheck disable=SC2086
exec "$out/fuzz_parse" $opts -max_total_time="$mode" -print_final_stats=1 \
    -artifact_prefix="$out/" "$out/work" "$here/corpus" "$root/tests/text/golden"
