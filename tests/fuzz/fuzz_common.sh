# fuzz_common.sh - what the fuzz scripts share (sourced by run.sh and
# run_msccl.sh after they set `here` and `name`; arguments [SECONDS|merge]
# [OUTDIR] as theirs):
#   fuzz_init "$@"       mode, out, cc, root set; exits 77 (skipped) when
#                        clang or libFuzzer is missing
#   fuzz_cflags          the flags every harness is built with
#   fuzz_go BIN DICT MAXLEN CORPUS WORK PREFIX [SEED_DIR...]
#                        merge mode: rebuild CORPUS from itself plus WORK;
#                        else fuzz for `mode` seconds over WORK, CORPUS and
#                        the seed folders, crashes to PREFIX* (exit != 0)
fuzz_init() {
    root=$(cd "$here/../.." && pwd)
    mode=${1:-60}
    out=${2:-$root/build-fuzz}
    cc=${CLANG:-clang}
    mkdir -p "$out"
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "SKIP: $cc not found"
        exit 77
    fi
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$out/probe.c"
    if ! "$cc" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" >/dev/null 2>&1; then
        echo "SKIP: $cc cannot link libFuzzer (-fsanitize=fuzzer)"
        exit 77
    fi
}

fuzz_cflags() {
    echo "-g -O1 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer" \
        "-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
}

fuzz_go() {
    bin=$1 dict=$2 maxlen=$3 corpus=$4 work=$5 prefix=$6
    shift 6
    mkdir -p "$work"
    # libFuzzer exits 77 on a crash by default: ctest would call that "skipped".
    opts="-dict=$dict -max_len=$maxlen -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1"
    if [ "$mode" = merge ]; then
        merged="$work.merged"
        rm -rf "$merged" && mkdir -p "$merged"
        # shellcheck disable=SC2086
        "$bin" $opts -merge=1 "$merged" "$corpus" "$work"
        find "$corpus" -type f -delete
        cp "$merged"/* "$corpus/"
        echo "corpus: $(ls "$corpus" | wc -l) files"
        exit 0
    fi
    # shellcheck disable=SC2086
    exec "$bin" $opts -max_total_time="$mode" -print_final_stats=1 -artifact_prefix="$prefix" \
        "$work" "$corpus" "$@"
}
