#!/usr/bin/env bash
# test_edges.sh COLLSTEP - the edges a new user hits first (issue #29), tried
# on hand-written files as a new user would:
#   outputs    platform export and export msccl replace only what collstep
#              wrote (exit 2 otherwise, --force), mode 0644 under umask 022;
#              an output whose directory is missing: exit 2 before any work,
#              naming the path given (never PATH.tmp.PID)
#   leftovers  a sim killed with SIGKILL (its guard too) leaves DIR.tmp.PID;
#              the next run writing the same paths removes what dead
#              processes left, says so, and succeeds
#   memory     run --size larger than this machine's memory: exit 2 at once,
#              naming the size and the estimate
#   sizes      --size 0 is an error; sizes are rounded down to whole elements
#              (and blocks per rank) and the rows use the rounded size
#   sets       --schedule A,B where A serves every size B serves: refused,
#              naming both; a partial overlap is said per size
#   tables     the --compare view and plan's table have unit lines
#   help       every subcommand's help gives the shared list of exit codes
. "$(dirname "$0")/common.sh"
for sub in sim run export platform; do
    "$cs" $sub --help >/dev/null 2>&1 || { echo "SKIP: collstep $sub not built"; exit 77; }
done
umask 022
cd "$tmp"

# --- platform export: only over what collstep wrote ------------------------------
echo "my notes: do not lose" > notes.txt
cp notes.txt notes.orig
"$cs" platform export summit:nodes=1 -o notes.txt >/dev/null 2>err; rc=$?
[ $rc = 2 ] && cmp -s notes.txt notes.orig && grep -q "notes.txt exists and is not a platform written by collstep" err &&
    ok || bad "platform export over a text file: exit $rc, $(cat err)"
# a hand-written SimGrid platform is not collstep's either
printf '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n<platform version="4.1">\n<zone id="z" routing="Full">\n<host id="a" speed="1f"/>\n</zone></platform>\n' > hand.xml
cp hand.xml hand.orig
"$cs" platform export summit:nodes=1 -o hand.xml >/dev/null 2>err; rc=$?
[ $rc = 2 ] && cmp -s hand.xml hand.orig && ok || bad "platform export over a hand-written platform: exit $rc"
"$cs" platform export summit:nodes=1 -o hand.xml --force >/dev/null 2>err && ! cmp -s hand.xml hand.orig &&
    ok || bad "platform export --force: $(cat err)"
rm -f p.xml
"$cs" platform export summit:nodes=1 -o - >stdout.xml 2>err && [ ! -e ./- ] &&
    "$cs" platform export summit:nodes=1 -o p.xml 2>/dev/null && cmp -s stdout.xml p.xml &&
    grep -q "wrote standard output" err && ok || bad "platform export -o -: $(cat err)"
rm -f p.xml
"$cs" platform export summit:nodes=1 -o p.xml 2>err && [ "$(stat -c %a p.xml)" = 644 ] &&
    ok || bad "platform export: mode $(stat -c %a p.xml 2>/dev/null), want 644 (umask 022): $(cat err)"
grep -q "^<!-- written by collstep" p.xml && ok || bad "exported platform has no collstep marker"
"$cs" platform export summit:nodes=2 -o p.xml 2>err && grep -q 'summit:nodes=2' p.xml &&
    ok || bad "platform export over its own file: $(cat err)"
"$cs" platform show p.xml >/dev/null 2>err && ok || bad "the marked platform does not load: $(cat err)"
"$cs" platform export summit:nodes=1 -o nodir/p.xml >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "nodir/p.xml: nodir does not exist" err && ! grep -q '\.tmp\.' err &&
    ok || bad "platform export into a missing directory: exit $rc, $(cat err)"

# --- export msccl: only over MSCCL XML that collstep wrote --------------------------
printf '<?xml version="1.0"?>\n<config><keep>me</keep></config>\n' > foreign.xml
cp foreign.xml foreign.orig
"$cs" export msccl --coll allreduce --algo ring --ranks 4 -o foreign.xml >/dev/null 2>err; rc=$?
[ $rc = 2 ] && cmp -s foreign.xml foreign.orig && ok || bad "export msccl over any XML: exit $rc, $(cat err)"
"$cs" export msccl --coll allreduce --algo ring --ranks 4 -o ring.xml 2>err &&
    "$cs" export msccl --coll allreduce --algo rd --ranks 4 -o ring.xml 2>>err && grep -q 'name="rd"' ring.xml &&
    ok || bad "export msccl over its own file: $(cat err)"
"$cs" verify ring.xml >/dev/null 2>err && ok || bad "the marked MSCCL XML does not load: $(cat err)"
"$cs" export msccl --coll allreduce --algo ring --ranks 4 -o foreign.xml --force >/dev/null 2>err &&
    ok || bad "export msccl --force: $(cat err)"
"$cs" export msccl --coll allreduce --algo ring --ranks 4 -o nodir/r.xml >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "nodir/r.xml: nodir does not exist" err && ok || bad "export msccl into a missing directory: exit $rc"
"$cs" sim --platform summit:nodes=1 --algo ring --size 1M --trace nodir/tr >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "nodir/tr: nodir does not exist" err && ok || bad "sim --trace into a missing directory: exit $rc"

# --- a sim killed with SIGKILL, its guard too: the next run cleans up ---------------
mkdir -p kill && cd kill
# (192 GPUs, 7 sizes: about 2 s on a 2-core machine, so that the kill lands
# while it runs; 16 nodes and 5 sizes took 0.8 s, less than the wait below
# on a quiet machine)
setsid "$cs" sim --platform summit:nodes=32 --algo ring --size 16M:1G --trace tr --trace-no-plot \
    -o res.csv --format csv >/dev/null 2>err &
pid=$!
for _ in $(seq 150); do ls | grep -q 'tr\.tmp\.' && break; sleep 0.1; done
sleep 0.3
kill -9 -- -"$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 50); do pgrep -f "summit:nodes=32 --algo ring --size 16M:1G" >/dev/null || break; sleep 0.1; done
left=$(ls -A | grep '\.tmp\.')
[ -n "$left" ] && ok || bad "the killed sim left no temporary (killed too late?): $(ls -A)"
# a results temporary of a process that no longer runs, and one of a running one
sh -c 'exit 0' & gone=$!; wait $gone
echo "half" > "res.csv.tmp.$gone"
sleep 30 & alive=$!
echo "theirs" > "res.csv.tmp.$alive"
"$cs" sim --platform summit:nodes=16 --algo ring --size 16M --trace tr --trace-no-plot -o res.csv --format csv \
    >/dev/null 2>err2; rc=$?
[ $rc = 0 ] && [ -f res.csv ] && [ -f tr/.collstep-trace ] && ok || bad "the second sim: exit $rc, $(cat err2)"
[ "$(ls -A | grep '\.tmp\.')" = "res.csv.tmp.$alive" ] && ok || bad "leftovers after the second sim: $(ls -A | tr '\n' ' ')"
for t in $left "res.csv.tmp.$gone"; do
    grep -q "removed $t.*no longer runs" err2 && ok || bad "not said that $t was removed: $(cat err2)"
done
kill $alive 2>/dev/null; wait $alive 2>/dev/null
cd ..

# --- run: sizes that cannot fit this machine's memory, refused at once ---------------
kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
if [ -n "$kb" ]; then
    big=$((kb * 1024 * 4))
    start=$(date +%s%N)
    # address space capped at twice the memory available: a collstep that
    # tried to allocate fails at once instead of paging the machine out
    ( ulimit -v $((kb * 2)); timeout 60 env RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
        MASTER_PORT=$((port + 1)) "$cs" run --transport shm --iters 1 --warmup 0 \
        --coll allreduce --algo ring --size "1M,$big" ) >out 2>err; rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ $rc = 2 ] && grep -q -- "--size $big (.*): the buffers of the 1 rank on this machine need about .*, but .* of memory is available" err &&
        ok || bad "run --size $big (4 x MemAvailable): exit $rc, $(cat err)"
    [ $ms -lt 5000 ] && ok || bad "the refusal took $ms ms"
    [ ! -s out ] && ok || bad "the refused run printed rows"
fi

# --- sizes: 0 is an error, sizes round down to what moves --------------------------
"$cs" sim --platform summit:nodes=1 --algo ring --size 0 >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q -- "--size 0: smaller than one 4-byte element" err && ok || bad "sim --size 0: exit $rc, $(cat err)"
run1 --coll allreduce --algo ring --size 0 >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q -- "--size 0" err && ok || bad "run --size 0: exit $rc, $(cat err)"
"$cs" sim --platform summit:nodes=1 --ranks 4 --coll reduce-scatter --algo ring --size 1000,4K --format csv >rs.csv 2>err
[ "$(csv_col rs.csv size_bytes | tr '\n' ' ')" = "992 4096 " ] && [ "$(csv_col rs.csv count | tr '\n' ' ')" = "62 256 " ] &&
    ok || bad "reduce-scatter 1000 B on 4 ranks: sizes $(csv_col rs.csv size_bytes | tr '\n' ' '), want 992 4096"
python3 - rs.csv <<'PY' && ok || bad "algbw does not use the rounded size"
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
assert abs(float(r["algbw_GBps"]) - 992 / (float(r["time_us"]) * 1e3)) < 1e-3 * float(r["algbw_GBps"]), r
PY
[ "$(grep -c "rounded down" err)" = 1 ] && grep -q -- "--size 1000: 992 bytes move (62 float elements per rank)" err &&
    ok || bad "the rounding is said once: $(cat err)"
"$cs" sim --platform summit:nodes=1 --ranks 4 --coll reduce-scatter --algo ring --size 8 >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "nothing would move" err && ok || bad "a size below one block: exit $rc"
run1 --coll allgather --algo ring --size 1001 --format csv >ag.csv 2>err
[ "$(csv_col ag.csv size_bytes)" = 1000 ] && ok || bad "run: 1001 B of floats: size $(csv_col ag.csv size_bytes), want 1000"

# --- schedule sets: a file that would never be used is refused ----------------------
"$cs" export msccl --coll allreduce --algo ring --ranks 4 -o a.xml 2>/dev/null
"$cs" export msccl --coll allreduce --algo ring --ranks 4 --name other -o b.xml 2>/dev/null
"$cs" sim --platform summit:nodes=1 --ranks 4 --schedule a.xml,b.xml --size 1M >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "b.xml (0 bytes and more) would never be used: a.xml (0 bytes and more)" err &&
    ok || bad "--schedule A,B both serving every size: exit $rc, $(cat err)"
"$cs" export msccl --coll allreduce --algo ring --ranks 4 --max-bytes 1M -o small.xml 2>/dev/null
"$cs" sim --platform summit:nodes=1 --ranks 4 --schedule small.xml,a.xml --size 1M,2M --format csv >set.csv 2>err; rc=$?
[ $rc = 0 ] && grep -q "1048576 B served by small.xml (0 to 1048576 bytes); a.xml serves it too" err &&
    grep -q "2097152 B served by a.xml (0 bytes and more)$" err && ok || bad "a partial overlap is said: exit $rc, $(cat err)"

# --- unit lines: --compare and plan ---------------------------------------------------
"$cs" sim --platform summit:nodes=1 --algo ring,rd --size 1M --compare >cmp.out 2>err
grep -q "^#place .* time .*algbw .*busbw" cmp.out && grep -q "^# .*(us) *(GB/s) *(GB/s)" cmp.out &&
    ok || bad "--compare without its unit line: $(head -3 cmp.out)"
if "$cs" plan --help >/dev/null 2>&1; then
    "$cs" plan --platform summit:nodes=1 --size 1M --budget 5 --top 1 >plan.out 2>err
    grep -A1 "  algo  *params" plan.out | grep -q "(us) .*(GB/s)" && ok || bad "plan's table without its unit line: $(grep -A1 algo plan.out)"
fi

# --- help: every subcommand gives the shared exit codes --------------------------------
for sub in algos gen verify stats platform sim run import export calibrate validate plan trace; do
    "$cs" $sub --help >help.out 2>&1 || continue
    grep -q "^2 usage error, malformed input or refused output path, 3 failure while running" help.out &&
        ! grep -q "1 other failures" help.out && ok || bad "$sub --help: not the shared exit codes"
done

finish
