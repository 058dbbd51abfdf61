#!/usr/bin/env bash
# trace_safety.sh - `--trace DIR` never deletes what collstep did not write
# (issue #16), for `collstep sim` and `collstep run --transport shm` (one
# rank, env bootstrap):
#   - DIR is a project (src/main.c, README), given as ../proj from inside
#     it: refused (exit code below), the message names the .collstep-trace
#     marker, every file byte for byte untouched, no DIR.tmp.* / DIR.old.*;
#   - DIR is a regular file (precious.csv): refused, "is a file, not a trace
#     directory", the file untouched;
#   - DIR is a trace collstep wrote: a second run replaces it (exit 0, the
#     new size in summary.json, nothing left beside it).
# Exit code of a refusal: not 0 and not a signal (< 128); CS_REFUSED_RC=N
# asks for exactly N (2, "usage error / refused output path", once the CLI
# maps refusals to it).
#   trace_safety.sh COLLSTEP
set -u
cs=${1:-}
if [ -z "$cs" ] || [ ! -x "$cs" ]; then echo "SKIP: collstep not built ('$cs')"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failn=0
check() { if eval "$1"; then pass=$((pass + 1)); else echo "FAIL: $2"; failn=$((failn + 1)); fi; }
refused() { # refused RC
    if [ -n "${CS_REFUSED_RC:-}" ]; then [ "$1" = "$CS_REFUSED_RC" ]; else [ "$1" -ne 0 ] && [ "$1" -lt 128 ]; fi
}
leftovers() { ls -A "$1" | grep -E '\.(tmp|old)\.[0-9]+$'; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# one MODE ARGS...: run `collstep sim` or a one-rank `collstep run` with the
# trace options ARGS in the current directory; rc, out, err set.
one() {
    local mode=$1; shift
    if [ "$mode" = sim ]; then
        "$cs" sim --platform summit:nodes=1 --algo ring --size "$size" --trace-no-plot "$@" \
            >"$tmp/out" 2>"$tmp/err"
    else
        env -u PMIX_RANK -u PMIX_NAMESPACE RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
            MASTER_PORT="$(free_port)" timeout 60 "$cs" run --coll allreduce --algo ring \
            --size "$size" --iters 2 --warmup 1 --transport shm --trace-no-plot "$@" \
            >"$tmp/out" 2>"$tmp/err" </dev/null
    fi
    rc=$?
}

modes="sim run"
command -v python3 >/dev/null || { echo "no python3: sim only"; modes=sim; }
"$cs" run --help >/dev/null 2>&1 || { echo "collstep without run: sim only"; modes=sim; }

for mode in $modes; do
    w="$tmp/$mode"
    mkdir -p "$w/proj/src"
    printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$w/proj/src/main.c"
    printf 'my project\n' >"$w/proj/README"
    cp -a "$w/proj" "$tmp/ref-$mode"
    size=1M
    [ "$mode" = run ] && size=4K

    # the issue's reproduction: from inside the project, --trace ../proj
    (cd "$w/proj" && one "$mode" --trace ../proj; echo "$rc" >"$tmp/rc")
    rc=$(cat "$tmp/rc")
    cat "$tmp/err"
    check 'refused "$rc"' "$mode: project: exit code $rc"
    check 'grep -q "\.collstep-trace" "$tmp/err"' "$mode: the message does not name the marker"
    check 'diff -r "$tmp/ref-$mode" "$w/proj" >/dev/null' "$mode: the project changed"
    check '[ -z "$(leftovers "$w")" ]' "$mode: left $(leftovers "$w")"

    # a regular file
    printf 'a,b\n1,2\n' >"$w/precious.csv"
    cp "$w/precious.csv" "$tmp/precious.ref"
    (cd "$w" && one "$mode" --trace precious.csv; echo "$rc" >"$tmp/rc")
    rc=$(cat "$tmp/rc")
    cat "$tmp/err"
    check 'refused "$rc"' "$mode: file: exit code $rc"
    check 'grep -q "precious.csv is a file, not a trace directory" "$tmp/err"' "$mode: file message"
    check 'cmp -s "$w/precious.csv" "$tmp/precious.ref"' "$mode: the file changed"

    # a trace collstep wrote, replaced by a second run of another size
    (cd "$w" && one "$mode" --trace tr; echo "$rc" >"$tmp/rc")
    check '[ "$(cat "$tmp/rc")" = 0 ] && [ -f "$w/tr/.collstep-trace" ] && [ -f "$w/tr/summary.json" ]' \
        "$mode: first trace (rc $(cat "$tmp/rc")): $(cat "$tmp/err")"
    size=2M
    [ "$mode" = run ] && size=8K
    (cd "$w" && one "$mode" --trace tr; echo "$rc" >"$tmp/rc")
    case $size in *M) bytes=$((${size%M} * 1048576)) ;; *K) bytes=$((${size%K} * 1024)) ;; esac
    check '[ "$(cat "$tmp/rc")" = 0 ]' "$mode: second trace: rc $(cat "$tmp/rc"): $(cat "$tmp/err")"
    check 'grep -q "$bytes" "$w/tr/summary.json"' "$mode: the trace was not replaced ($bytes bytes)"
    check '[ -z "$(leftovers "$w")" ]' "$mode: left $(leftovers "$w")"

    # the plot drawn again from plot.gp (utilization.png, which --trace-no-plot
    # or a missing gnuplot left out): the trace is still collstep's
    printf 'png\n' >"$w/tr/utilization.png"
    (cd "$w" && one "$mode" --trace tr; echo "$rc" >"$tmp/rc")
    check '[ "$(cat "$tmp/rc")" = 0 ]' "$mode: a redrawn plot made the trace foreign: $(cat "$tmp/err")"

    # a note and a folder the user put into that trace: a third run, forced
    # or not, refuses (exit 2, naming the file) and keeps them and the trace
    printf 'my notes
' >"$w/tr/README.txt"
    mkdir "$w/tr/analysis" && printf 'x
' >"$w/tr/analysis/report.md"
    cp "$w/tr/summary.json" "$tmp/summary.ref"
    for f in "" --force; do
        (cd "$w" && one "$mode" --trace tr $f; echo "$rc" >"$tmp/rc")
        check 'refused "$(cat "$tmp/rc")"' "$mode: user's file in a trace ($f): exit $(cat "$tmp/rc")"
        check 'grep -q "in it is not collstep.s" "$tmp/err"' "$mode: message ($f): $(cat "$tmp/err")"
        check '[ "$(cat "$w/tr/README.txt")" = "my notes" ] && [ -f "$w/tr/analysis/report.md" ] && cmp -s "$w/tr/summary.json" "$tmp/summary.ref"' \
            "$mode: the user's files or the trace changed ($f)"
        check '[ -z "$(leftovers "$w")" ]' "$mode: left $(leftovers "$w") ($f)"
    done
done
echo "$pass passed, $failn failed"
[ "$failn" = 0 ]
