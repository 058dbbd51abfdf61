#!/bin/sh
# Build and run the MSCCL XML importer fuzzer (libFuzzer + ASan + UBSan).
#
#   tests/fuzz/run_msccl.sh [SECONDS] [OUTDIR]   fuzz for SECONDS (default 60)
#                                   over tests/fuzz/corpus_msccl and the XML
#                                   files of tests/interop/xml; new inputs go
#                                   to OUTDIR/work_msccl, crashes to
#                                   OUTDIR/msccl-crash-* (exit != 0)
#   tests/fuzz/run_msccl.sh merge [OUTDIR]   minimise: rebuild the corpus from
#                                   itself plus OUTDIR/work_msccl
#
# OUTDIR defaults to build-fuzz at the top of the repository.  Exits 77
# (skipped) when clang, libFuzzer or libxml2 is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:-60}
out=${2:-$root/build-fuzz}
cc=${CLANG:-clang}
mkdir -p "$out/work_msccl"

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: $cc not found"
    exit 77
fi
if ! xml=$(pkg-config --cflags --libs libxml-2.0 2>/dev/null); then
    echo "SKIP: libxml-2.0 (libxml2-dev) not found"
    exit 77
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$out/probe.c"
if ! "$cc" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" >/dev/null 2>&1; then
    echo "SKIP: $cc cannot link libFuzzer (-fsanitize=fuzzer)"
    exit 77
fi

# Lower bounds so a 100-byte input cannot ask for a million gpus or chunks
# on every run (the importer's behaviour is otherwise unchanged).
# shellcheck disable=SC2086
"$cc" -g -O1 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DCS_MSCCL_MAX_GPUS=64 -DCS_MSCCL_MAX_SLOTS=65536 -DCS_VERSION='"fuzz"' \
    -I"$root/core" -I"$root/interop" \
    "$here/fuzz_msccl.c" "$root"/interop/cs_msccl*.c "$root"/core/*.c \
    $xml -lpthread -lm -o "$out/fuzz_msccl"

opts="-dict=$here/msccl.dict -max_len=8192 -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1"
if [ "$mode" = merge ]; then
    rm -rf "$out/merged_msccl" && mkdir -p "$out/merged_msccl"
    # shellcheck disable=SC2086
    "$out/fuzz_msccl" $opts -merge=1 "$out/merged_msccl" "$here/corpus_msccl" "$out/work_msccl"
    find "$here/corpus_msccl" -type f -delete
    cp "$out/merged_msccl"/* "$here/corpus_msccl/"
    echo "corpus: $(ls "$here/corpus_msccl" | wc -l) files"
    exit 0
fi
# shellcheck disable=SC2086
exec "$out/fuzz_msccl" $opts -max_total_time="$mode" -print_final_stats=1 \
    -artifact_prefix="$out/msccl-" "$out/work_msccl" "$here/corpus_msccl" "$root/tests/interop/xml"
