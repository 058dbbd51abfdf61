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
. "$here/fuzz_common.sh"
fuzz_init "$@"
if ! xml=$(pkg-config --cflags --libs libxml-2.0 2>/dev/null); then
    echo "SKIP: libxml-2.0 (libxml2-dev) not found"
    exit 77
fi

# Lower bounds so a 100-byte input cannot ask for a million gpus or chunks
# on every run (the importer's behaviour is otherwise unchanged).
# shellcheck disable=SC2046,SC2086
"$cc" $(fuzz_cflags) -DCS_MSCCL_MAX_GPUS=64 -DCS_MSCCL_MAX_SLOTS=65536 -DCS_VERSION='"fuzz"' \
    -I"$root/core" -I"$root/interop" \
    "$here/fuzz_msccl.c" "$root"/interop/cs_msccl*.c "$root"/core/*.c \
    $xml -lpthread -lm -o "$out/fuzz_msccl"

fuzz_go "$out/fuzz_msccl" "$here/msccl.dict" 8192 "$here/corpus_msccl" "$out/work_msccl" \
    "$out/msccl-" "$root/tests/interop/xml"
