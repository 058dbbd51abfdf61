#!/bin/bash
# test_live_ranks.sh COLLSTEP - what every rank of a live command does alike,
# with 2 ranks started through the environment bootstrap on loopback:
#   --wait of `collstep run`: spin, yield, and auto deciding by the ranks on
#     this machine (kernel boot id) against its online cores, as validate and
#     calibrate do (told at CS_LOG=info); a bad value is a usage error
. "$(dirname "$0")/common.sh"

# ranks N OUT -- ARGS: start N ranks of `collstep ARGS`; rank r's stdout and
# stderr go to OUT.r.out / OUT.r.err, its exit code to OUT.r.rc.
ranks() {
    local n=$1 out=$2 r pids=()
    shift 3
    port=$((port + 1))
    for ((r = 0; r < n; r++)); do
        env RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$cs" "$@" \
            >"$out.$r.out" 2>"$out.$r.err" &
        pids+=($!)
    done
    for ((r = 0; r < n; r++)); do
        wait "${pids[$r]}"
        echo $? >"$out.$r.rc"
    done
}
RUN=(run --transport tcp --coll allreduce --algo ring --size 1K --iters 2 --warmup 0 --timeout 30)

# --- run --wait ------------------------------------------------------------------
cores=$(getconf _NPROCESSORS_ONLN)
auto=spin
[ 2 -gt "$cores" ] && auto=yield
for w in spin yield auto; do
    want=$w
    [ $w = auto ] && want=$auto
    CS_LOG=info ranks 2 "$tmp/w$w" -- "${RUN[@]}" --wait $w
    for r in 0 1; do
        [ "$(cat "$tmp/w$w.$r.rc")" = 0 ] && ok ||
            { bad "run --wait $w: rank $r exits $(cat "$tmp/w$w.$r.rc")"; cat "$tmp/w$w.$r.err"; }
        grep -q "2 ranks on this machine, $cores cores, --wait $w: idle ranks $want\$" \
            "$tmp/w$w.$r.err" && ok ||
            { bad "run --wait $w: rank $r does not say 'idle ranks $want'"; cat "$tmp/w$w.$r.err"; }
    done
    grep -q "^ *1024 .* float " "$tmp/w$w.0.out" && ok || bad "run --wait $w: no row for 1024 B"
done
# without --wait: auto
CS_LOG=info ranks 2 "$tmp/wdef" -- "${RUN[@]}"
grep -q -- "--wait auto: idle ranks $auto\$" "$tmp/wdef.0.err" && ok ||
    { bad "run without --wait: not auto"; cat "$tmp/wdef.0.err"; }
# a bad value: parsed before any bootstrap, one process is enough
"$cs" "${RUN[@]}" --wait sometimes >/dev/null 2>"$tmp/wbad.err"
rc=$?
[ $rc = 2 ] && ok || bad "run --wait sometimes: exit $rc, expected 2"
grep -q "^collstep run: --wait: expected auto, spin or yield, found 'sometimes'" "$tmp/wbad.err" &&
    ok || { bad "run --wait sometimes: message"; cat "$tmp/wbad.err"; }
"$cs" run --help | grep -q "^  --wait W  *how an idle rank waits" && ok || bad "run --help: no --wait"

finish
