#!/usr/bin/env bash
# test_grammar.sh COLLSTEP - one grammar for `sim` and `run` (issue #16):
# every rule is checked against both commands, with the same arguments.
#   sizes (sweeps like nccl-tests, lists, mixed, too small), --algo lists,
#   --param global and per algorithm, -o whole and refusing a user's file,
#   --force, --compare, provenance columns, --dtype / --op errors;
# and the run-time rules: run verifies first (a deadlocking schedule exits 1
# in under a second, before any transport), a --map with fewer hosts than
# devices is an error, Ctrl-C / SIGTERM during `sim --trace` leave nothing.
# `run` is one rank on the shm transport (env bootstrap).
source "$(dirname "$0")/common.sh"
SIM=("$cs" sim --platform summit:nodes=1 --ranks 4)
# both CMD ARGS...: run the same arguments through sim and run; $tmp/sim.*, $tmp/run.*
both() {
    "${SIM[@]}" "$@" >"$tmp/sim.out" 2>"$tmp/sim.err"; src=$?
    run1 "$@" >"$tmp/run.out" 2>"$tmp/run.err"; rrc=$?
}
expect_rc() { # what want
    [ "$src" = "$2" ] && ok || { bad "$1 (sim): exit $src, expected $2"; head -3 "$tmp/sim.err"; }
    [ "$rrc" = "$2" ] && ok || { bad "$1 (run): exit $rrc, expected $2"; head -3 "$tmp/run.err"; }
}
rows() { csv_col "$1" size_bytes | wc -l; }

# --- sizes ------------------------------------------------------------------
both --coll allreduce --algo ring --size 1K:100K --format csv
expect_rc "sweep" 0
[ "$(rows "$tmp/sim.out")" = 7 ] && [ "$(rows "$tmp/run.out")" = 7 ] && ok ||
    bad "1K:100K: 7 sizes like nccl-tests (sim $(rows "$tmp/sim.out"), run $(rows "$tmp/run.out"))"
[ "$(csv_col "$tmp/sim.out" size_bytes | tr '\n' ' ')" = "$(csv_col "$tmp/run.out" size_bytes | tr '\n' ' ')" ] &&
    ok || bad "sim and run expand 1K:100K differently"
both --coll allreduce --algo ring --size 1K,4K,1M --format csv
expect_rc "list" 0
[ "$(csv_col "$tmp/sim.out" size_bytes | tr '\n' ' ')" = "1024 4096 1048576 " ] &&
    [ "$(csv_col "$tmp/run.out" size_bytes | tr '\n' ' ')" = "1024 4096 1048576 " ] && ok ||
    bad "1K,4K,1M: three sizes in order"
both --coll allreduce --algo ring --size 4K:16K,1M,4K --format csv
expect_rc "mixed list" 0
[ "$(rows "$tmp/sim.out")" = 4 ] && [ "$(rows "$tmp/run.out")" = 4 ] && ok ||
    bad "4K:16K,1M,4K: 4 sizes, duplicates dropped"
both --coll allreduce --algo ring --size 1
expect_rc "size below one element" 2
grep -q "smaller than one 4-byte element" "$tmp/sim.err" && grep -q "smaller than one 4-byte element" "$tmp/run.err" &&
    ok || bad "--size 1: the message names the element"
both --coll allreduce --algo ring --size 4K:1K
expect_rc "MIN > MAX" 2

# --- algorithms and parameters ---------------------------------------------
both --coll allreduce --algo ring,rd --size 64K --format csv
expect_rc "algo list" 0
[ "$(csv_col "$tmp/sim.out" algo | tr '\n' ' ')" = "ring rd " ] && [ "$(csv_col "$tmp/run.out" algo | tr '\n' ' ')" = "ring rd " ] &&
    ok || bad "--algo ring,rd: a row each, in order"
both --coll allreduce --algo ring,rd --size 64K --param ring:nchunks=2 --format csv
expect_rc "per-algorithm param" 0
for f in sim run; do
    [ "$(csv_col "$tmp/$f.out" params | tr '\n' '|')" = "nchunks=2 channels=1 local=1||" ] && ok ||
        bad "$f: ring:nchunks=2 reaches ring only: $(csv_col "$tmp/$f.out" params | tr '\n' '|')"
done
both --coll allreduce --algo ring,rhd --size 64K --param nchunks=3 --param rhd:nchunks=1 --format csv
expect_rc "global param, per-algorithm override" 0
for f in sim run; do
    [ "$(csv_col "$tmp/$f.out" params | tr '\n' '|')" = "nchunks=3 channels=1 local=1|nchunks=1|" ] && ok ||
        bad "$f: global nchunks=3 and rhd:nchunks=1: $(csv_col "$tmp/$f.out" params | tr '\n' '|')"
done
both --coll allreduce --algo ring,rd --size 64K --param nchunks=2
expect_rc "global param only some algorithms have" 0
both --coll allreduce --algo ring --size 64K --param dims=2x2
expect_rc "global param no algorithm has" 2
both --coll allreduce --algo ring --size 64K --param hier:dims=2x2
expect_rc "param for an algorithm not given" 2
both --coll allreduce --algo ring,ring --size 64K
expect_rc "algorithm listed twice" 2
both --coll allreduce --algo nope --size 64K
expect_rc "unknown algorithm" 2

# --- types ---------------------------------------------------------------------
both --coll allreduce --algo ring --size 64K --dtype bogus
expect_rc "unknown dtype" 2
grep -q "bfloat16" "$tmp/sim.err" && grep -q "bfloat16" "$tmp/run.err" && ok || bad "dtype error lists the types"
both --coll allreduce --algo ring --size 64K --op avg
expect_rc "unknown op" 2

# --- provenance ---------------------------------------------------------------
both --coll allreduce --algo ring --size 64K --format json
expect_rc "json" 0
python3 - "$tmp/sim.out" "$tmp/run.out" <<'PY' && ok || bad "provenance keys (model, platform, transport, params)"
import json, sys
s = json.load(open(sys.argv[1]))[0]
r = json.load(open(sys.argv[2]))[0]
assert s["model"] == "ideal" and s["platform"] == "summit:nodes=1" and s["transport"] == "", s
assert r["transport"] == "shm" and r["platform"] == "" and r["model"] == "", r
assert s["params"] == r["params"] == "nchunks=1 channels=1 local=1", (s, r)
PY
both --coll allreduce --algo ring --size 64K
grep -q "^# allreduce ring (nchunks=1 channels=1 local=1), 4 ranks, platform summit:nodes=1, model ideal" "$tmp/sim.out" && ok ||
    bad "sim table header: $(head -1 "$tmp/sim.out")"
grep -q "^# allreduce ring (nchunks=1 channels=1 local=1), 1 ranks, transport shm" "$tmp/run.out" && ok ||
    bad "run table header: $(head -1 "$tmp/run.out")"

# --- comparison view -------------------------------------------------------------
both --coll allreduce --algo ring,rd --size 64K,1M --compare=ring
expect_rc "compare" 0
for f in sim run; do
    [ "$(grep -c '^#place' "$tmp/$f.out")" = 2 ] && grep -q ' 1.00x' "$tmp/$f.out" && ok ||
        bad "$f --compare: a ranked block per size with ring at 1.00x"
done
both --coll allreduce --algo ring,rd --size 64K --compare --format csv
for f in sim run; do
    [ "$(csv_col "$tmp/$f.out" place | sort | tr '\n' ' ')" = "1 2 " ] && ok || bad "$f: csv place column"
done

both --coll allreduce --algo ring --size 64K --compare=rd
expect_rc "--compare REF not among the algorithms" 2
# sim says so before it simulates (nothing on stdout); run, after its runs,
# reports the rows it measured without the comparison
grep -q -- "--compare=rd: 'rd' is not among --algo ring" "$tmp/sim.err" && ! grep -q "^ *65536 " "$tmp/sim.out" &&
    ok || bad "sim --compare=rd: refused before simulating"
grep -q "'rd' is not among the algorithms compared" "$tmp/run.err" && grep -q "^ *65536 " "$tmp/run.out" &&
    ok || bad "run --compare=rd: says why, reports the rows without the comparison"

# --- options ----------------------------------------------------------------------
both --coll allreduce --algo ring --size 64K --bogus
expect_rc "unknown option" 2
both --coll allreduce --algo ring --size
expect_rc "option without its value" 2
for f in sim run; do
    grep -q "collstep $f: option --size needs a value (see collstep $f --help)" "$tmp/$f.err" && ok ||
        bad "$f: one line naming the option: $(head -1 "$tmp/$f.err")"
done
both --coll allreduce --algo ring --size 64K --root x
expect_rc "--root not a number" 2
both --coll allreduce --schedule x.sched --algo ring --size 64K
expect_rc "--algo and --schedule" 2

# --- -o: whole, never over a user's file -------------------------------------------
echo "my notes" >"$tmp/notes.txt"
for f in sim run; do
    rm -f "$tmp/res.$f"
    if [ $f = sim ]; then "${SIM[@]}" --algo ring --size 64K -o "$tmp/res.$f" 2>"$tmp/err"; rc=$?
    else run1 --coll allreduce --algo ring --size 64K -o "$tmp/res.$f" 2>"$tmp/err"; rc=$?; fi
    [ $rc = 0 ] && grep -q "^# allreduce ring" "$tmp/res.$f" && ok || bad "$f -o: rc $rc"
    if [ $f = sim ]; then "${SIM[@]}" --algo ring --size 64K -o "$tmp/res.$f" --format csv 2>"$tmp/err"; rc=$?
    else run1 --coll allreduce --algo ring --size 64K -o "$tmp/res.$f" --format csv 2>"$tmp/err"; rc=$?; fi
    [ $rc = 0 ] && head -1 "$tmp/res.$f" | grep -q "^algo,coll," && ok || bad "$f -o replaces its own results: rc $rc"
    if [ $f = sim ]; then "${SIM[@]}" --algo ring --size 64K -o "$tmp/notes.txt" 2>"$tmp/err"; rc=$?
    else run1 --coll allreduce --algo ring --size 64K -o "$tmp/notes.txt" 2>"$tmp/err"; rc=$?; fi
    [ $rc = 2 ] && [ "$(cat "$tmp/notes.txt")" = "my notes" ] && ok ||
        { bad "$f -o over a user's file: rc $rc, expected 2, file untouched"; cat "$tmp/err"; }
    ls "$tmp" | grep -q '\.tmp\.' && bad "$f: a temporary file was left" || ok
done
cp "$tmp/notes.txt" "$tmp/notes2.txt"
"${SIM[@]}" --algo ring --size 64K -o "$tmp/notes2.txt" --force 2>/dev/null
[ $? = 0 ] && grep -q "^# allreduce ring" "$tmp/notes2.txt" && ok || bad "sim --force replaces a user's file"

# --- run verifies first: a deadlocking schedule ---------------------------------------
cat >"$tmp/dead.sched" <<'EOF'
collstep-schedule 1
collective allreduce ranks 2 chunks 1
rank 0
  0: recv from 1 out[0:1]
  1: send to 1 in[0:1] after 0
rank 1
  0: recv from 0 out[0:1]
  1: send to 0 in[0:1] after 0
end
EOF
port=$((port + 1))
start=$(date +%s%N)
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$cs" run --transport tcp \
        --schedule "$tmp/dead.sched" --size 64K --timeout 30 >"$tmp/dead.$r.out" 2>"$tmp/dead.$r.err" &
    eval "pid$r=$!"
done
wait "$pid0"; rc0=$?; wait "$pid1"; rc1=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc0 = 1 ] && [ $rc1 = 1 ] && ok || bad "run on a deadlocking schedule: exits $rc0 $rc1, expected 1 1"
# refused before any rank waits for its peer (--timeout 30): well under that
# even on a loaded machine, where a start alone can take a second or two
[ $ms -lt 10000 ] && ok || bad "run on a deadlocking schedule took $ms ms (>= 10 s: it waited for a peer)"
grep -q "deadlock" "$tmp/dead.0.err" && grep -q "cycle of 4 steps" "$tmp/dead.0.err" && ok ||
    { bad "rank 0 names the deadlock and lists its cycle"; cat "$tmp/dead.0.err"; }
grep -q "rank 1 step 1 (send to 0)" "$tmp/dead.0.err" && ok || bad "the cycle is listed step by step"
run1 --schedule "$tmp/dead.sched" --size 64K >/dev/null 2>&1
[ $? = 2 ] && ok || bad "a 2-rank schedule on 1 rank: usage error"
printf 'collstep-schedule 1\ncollective allreduce ranks 1 chunks 1\nrank 0\n  0: nop\nend\n' >"$tmp/one.sched"
"$cs" verify "$tmp/one.sched" >"$tmp/v.out" 2>&1
[ $? = 1 ] && grep -q "INCORRECT: 1 finding$" "$tmp/v.out" && ok || { bad "verify: '1 finding'"; cat "$tmp/v.out"; }
"$cs" verify "$tmp/dead.sched" >"$tmp/v.out" 2>&1
[ $? = 1 ] && grep -q "INCORRECT: 3 findings$" "$tmp/v.out" && grep -q "cycle of 4 steps" "$tmp/v.out" && ok ||
    { bad "verify lists the cycle"; cat "$tmp/v.out"; }

# --- sim: a --map with fewer hosts than devices -----------------------------------------
printf 'node0_gpu0\nnode0_gpu1\n' >"$tmp/map"
"$cs" platform show summit:nodes=1 >"$tmp/plat" 2>&1
"$cs" sim --platform summit:nodes=1 --algo ring --size 64K --map "$tmp/map" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "names 2 hosts but .* has 6 devices: give --ranks 2" "$tmp/err" && ok ||
    { bad "--map with fewer hosts than devices: exit $rc"; cat "$tmp/err"; }

# --- Ctrl-C and SIGTERM during sim --trace: nothing left, 130 / 143 ----------------------
mkdir -p "$tmp/int"
for sig in INT TERM; do
    ( cd "$tmp/int" && exec "$cs" sim --platform summit:nodes=64 --algo ring --size 64M:256M \
        --trace tr --trace-no-plot -o res.csv --format csv >/dev/null 2>"$tmp/int.err" ) &
    pid=$!
    for _ in $(seq 100); do ls "$tmp/int" | grep -q 'tr\.tmp\.' && break; sleep 0.1; done
    sleep 0.5
    kill -$sig $pid
    wait $pid; rc=$?
    want=130; [ $sig = TERM ] && want=143
    [ $rc = $want ] && ok || { bad "SIG$sig during sim: exit $rc, expected $want"; cat "$tmp/int.err"; }
    left=$(ls -A "$tmp/int")
    [ -z "$left" ] && ok || bad "SIG$sig during sim left: $left"
    grep -q "interrupted" "$tmp/int.err" && ! grep -q "terminate called\|Backtrace\|Abort" "$tmp/int.err" && ok ||
        { bad "SIG$sig: a clean message, no SimGrid abort"; cat "$tmp/int.err"; }
    pgrep -f "summit:nodes=64 --algo ring --size 64M:256M" >/dev/null && bad "SIG$sig: the simulation still runs" || ok
done

# --- a set of MSCCL XML files: per size the file whose range serves it ------------------
if "$cs" export --help >/dev/null 2>&1; then
    mkdir -p "$tmp/set"
    "$cs" export msccl --coll allreduce --algo ring --ranks 1 --min-bytes 0 --max-bytes 65536 -o "$tmp/set/a.xml" &&
        "$cs" export msccl --coll allreduce --algo rd --ranks 1 --min-bytes 65537 --max-bytes 0 -o "$tmp/set/b.xml" &&
        ok || bad "export msccl for the set"
    "$cs" sim --platform summit:nodes=1 --ranks 1 --schedule "$tmp/set" --size 16K:1M:4 --format csv >"$tmp/sim.out" 2>"$tmp/sim.err"; src=$?
    run1 --schedule "$tmp/set" --size 16K:1M:4 --format csv >"$tmp/run.out" 2>"$tmp/run.err"; rrc=$?
    expect_rc "schedule set" 0
    for f in sim run; do
        [ "$(csv_col "$tmp/$f.out" params | sed 's|.*/||' | tr '\n' ' ')" = "a.xml a.xml b.xml b.xml " ] && ok ||
            bad "$f: sizes served by a.xml, a.xml, b.xml, b.xml: $(csv_col "$tmp/$f.out" params | tr '\n' ' ')"
        grep -q "262144 B served by .*b.xml (65537 bytes and more)" "$tmp/$f.err" && ok || bad "$f says which file served a size"
    done
    mkdir -p "$tmp/set1" && cp "$tmp/set/a.xml" "$tmp/set1/"
    "$cs" sim --platform summit:nodes=1 --ranks 1 --schedule "$tmp/set1" --size 1M >/dev/null 2>"$tmp/err"
    [ $? = 2 ] && grep -q "no file of the set serves 1048576 bytes" "$tmp/err" && ok || bad "a size no file serves: exit 2"
    "$cs" sim --platform summit:nodes=1 --ranks 1 --schedule "$tmp/set/a.xml" --size 1M >/dev/null 2>"$tmp/err"
    [ $? = 0 ] && ok || bad "one XML named alone serves every size"
fi

finish
