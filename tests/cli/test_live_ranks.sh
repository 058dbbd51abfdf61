#!/bin/bash
# test_live_ranks.sh COLLSTEP - what every rank of a live command does alike,
# with 2 ranks started through the environment bootstrap on loopback:
#   --wait of `collstep run`: spin, yield, and auto deciding by the ranks on
#     this machine (kernel boot id) against its online cores, as validate and
#     calibrate do (told at CS_LOG=info); a bad value is a usage error
#   schedules that cannot be built (unknown algorithm, bad --param, --root out
#     of range): rank 0 says why, once; every rank exits 2; a rank that alone
#     fails (its own arguments: --algo in run, --coll or --size in validate)
#     says why itself
. "$(dirname "$0")/common.sh"

# ranks N OUT -- ARGS: start N ranks of `collstep ARGS` (and ${extra[r]}, split,
# for rank r); rank r's stdout and stderr go to OUT.r.out / OUT.r.err, its exit
# code to OUT.r.rc.  A bootstrap port another test holds: again on another port.
port=$((30000 + RANDOM % 30000))
extra=()
ranks() {
    local n=$1 out=$2 r try pids
    shift 3
    for try in 1 2 3 4 5; do
        port=$((port + 1 + RANDOM % 64))
        pids=()
        for ((r = 0; r < n; r++)); do
            # shellcheck disable=SC2086
            env RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$cs" "$@" \
                ${extra[$r]:-} >"$out.$r.out" 2>"$out.$r.err" &
            pids+=($!)
        done
        for ((r = 0; r < n; r++)); do
            wait "${pids[$r]}"
            echo $? >"$out.$r.rc"
        done
        grep -q "cannot listen on MASTER_PORT" "$out.0.err" || return 0
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

# --- a usage error in building the schedules: said once ------------------------------
# once N OUT WHAT TEXT: every one of the N ranks exited 2, and TEXT is on the
# stderr of rank 0 and of no other rank
once() {
    local n=$1 out=$2 what=$3 text=$4 r c all=0
    for ((r = 0; r < n; r++)); do
        [ "$(cat "$out.$r.rc")" = 2 ] && ok || bad "$what: rank $r exits $(cat "$out.$r.rc"), expected 2"
        c=$(grep -c -F -- "$text" "$out.$r.err")
        all=$((all + c))
        [ $r = 0 ] || [ -z "$(cat "$out.$r.err")" ] && ok ||
            { bad "$what: rank $r prints something"; cat "$out.$r.err"; }
    done
    [ $all = 1 ] && grep -q -F -- "$text" "$out.0.err" && ok ||
        { bad "$what: '$text' printed $all times, expected once, by rank 0"; cat "$out".*.err; }
}
ranks 3 "$tmp/ualgo" -- run --transport tcp --coll allreduce --algo ring,nosuch --size 1K --timeout 30
once 3 "$tmp/ualgo" "run --algo nosuch" "collstep run: no algorithm 'nosuch' for allreduce"
ranks 2 "$tmp/uparam" -- run --transport tcp --coll allreduce --algo ring --param bogus=3 --size 1K \
    --timeout 30
once 2 "$tmp/uparam" "run --param bogus=3" "collstep run: --param bogus: no algorithm of this command"
ranks 2 "$tmp/uroot" -- run --transport tcp --coll broadcast --algo binomial --root 5 --size 1K \
    --timeout 30
once 2 "$tmp/uroot" "run --root 5" "collstep run: --root 5 out of range [0, 2)"
ranks 3 "$tmp/valgo" -- validate --platform summit:nodes=1 --coll allreduce --algo nosuch \
    --size 1K --timeout 30
once 3 "$tmp/valgo" "validate --algo nosuch" "collstep validate: no algorithm 'nosuch' for allreduce"
# rank 1 alone is given an unknown algorithm: it says so (rank 0 cannot), all exit 2
extra=("--algo ring" "--algo nosuch")
ranks 2 "$tmp/own" -- run --transport tcp --coll allreduce --size 1K --timeout 30
extra=()
[ "$(cat "$tmp/own.0.rc") $(cat "$tmp/own.1.rc")" = "2 2" ] && ok ||
    bad "rank 1's own bad --algo: exits $(cat "$tmp/own.0.rc") $(cat "$tmp/own.1.rc"), expected 2 2"
grep -q "^collstep run: rank 1: no algorithm 'nosuch' for allreduce" "$tmp/own.1.err" && ok ||
    { bad "rank 1's own bad --algo: rank 1 does not say it"; cat "$tmp/own.1.err"; }
# validate: rank 1 alone given a bad --coll or a bad --size (parsed after the
# bootstrap, before the schedules): every rank still meets every collective of
# the bootstrap, rank 1 says why, all exit 2 (not 3, "lost rank 1")
for own in "--coll allreduce|--coll nosuchcoll|--size 1K" "--size 1K|--size bogus|--coll allreduce"; do
    IFS='|' read -r good bad_arg common <<<"$own"
    extra=("$good" "$bad_arg")
    # shellcheck disable=SC2086
    ranks 2 "$tmp/vown" -- validate --platform summit:nodes=1 --algo ring --timeout 30 $common
    extra=()
    [ "$(cat "$tmp/vown.0.rc") $(cat "$tmp/vown.1.rc")" = "2 2" ] && ok ||
        { bad "validate, rank 1's own $bad_arg: exits $(cat "$tmp/vown.0.rc") $(cat "$tmp/vown.1.rc"), expected 2 2"
          cat "$tmp"/vown.*.err; }
    grep -q "^collstep validate: rank 1: " "$tmp/vown.1.err" && ok ||
        { bad "validate, rank 1's own $bad_arg: rank 1 does not say why"; cat "$tmp/vown.1.err"; }
done
# single-process commands still say it
"$cs" sim --platform summit:nodes=1 --ranks 4 --coll allreduce --algo nosuch --size 1K \
    >/dev/null 2>"$tmp/sim.err"
[ $? = 2 ] && grep -q "collstep sim: no algorithm 'nosuch' for allreduce" "$tmp/sim.err" && ok ||
    { bad "sim --algo nosuch: not said"; cat "$tmp/sim.err"; }

finish
