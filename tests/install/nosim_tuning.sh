#!/bin/sh
# nosim_tuning.sh SRC WORK - a live-only build (-DCS_WITH_SIMGRID=OFF: no
# simulator, no planner) reads tuning tables: `collstep run --algo auto
# --tuning FILE` on two ranks (environment bootstrap, tcp on 127.0.0.1)
# runs, per size, the table's choice and checks it (0 wrong), as the full
# build does; and the commands that need SimGrid say they were not built.
# The table is the one the planner writes (core/cs_tuning.h), written here
# by hand.  Configures SRC into WORK/build (the cli only), builds with -j2.
set -u
src=$1 work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$src" -B "$work/build" $gen -DCS_WITH_SIMGRID=OFF -DCS_WITH_CUDA=OFF \
    -DCS_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; fail "configure"; }
cmake --build "$work/build" -j2 --target collstep >"$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log"; fail "build"; }
cs=$work/build/cli/collstep
"$cs" sim --help >/dev/null 2>&1 && fail "sim is built without SimGrid"
"$cs" sim --help 2>&1 | grep -qi "not built" || fail "sim does not say it was not built"

cat >"$work/t.tuning" <<'TAB'
collstep-tuning 1
# written by hand for nosim_tuning.sh
platform summit:nodes=1
ranks 2
entry allreduce 0 65535 rd - - 1
entry allreduce 65536 1073741824 ring nchunks=2 - 2
TAB
port=$((23000 + $$ % 20000))
pids=""
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$cs" run --transport tcp \
        --coll allreduce --algo auto --tuning "$work/t.tuning" --size 16K,256K --check \
        --format csv >"$work/run$r.csv" 2>"$work/run$r.err" &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
[ $rc = 0 ] || { cat "$work"/run*.err; fail "run --algo auto --tuning: a rank failed"; }
algos=$(python3 -c 'import csv,sys; print("|".join(r["algo"] for r in csv.DictReader(open(sys.argv[1]))))' "$work/run0.csv")
[ "$algos" = "rd|ring" ] || fail "rows say what the table chose: $algos"
grep -q "262144 B: ring nchunks=2 .*from" "$work/run0.err" || { cat "$work/run0.err"; fail "run says which entry served a size"; }
wrong=$(python3 -c 'import csv,sys; print("|".join(r["wrong"] for r in csv.DictReader(open(sys.argv[1]))))' "$work/run0.csv")
[ "$wrong" = "0|0" ] || fail "--check: wrong elements $wrong"
rm -rf "$work/build"
echo "live-only build: run --algo auto --tuning picked rd|ring and checked"
