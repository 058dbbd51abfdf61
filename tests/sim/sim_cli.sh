#!/usr/bin/env bash
# sim_cli.sh COLLSTEP - `collstep sim` from the command line: bad input
# exits 2 with a message naming the problem; a good run prints the
# nccl-tests table, CSV and JSON with the right rows.
. "$(dirname "$0")/../cli/usage_checks.sh"
bad() { expect_usage sim "$@"; } # EXPECTED-TEXT ARGS...

P=x86-p100-pcie-10gbe:nodes=2
bad "nosuchpreset" --platform nosuchpreset --algo ring --size 1M
bad "bogus" --platform "$P" --algo ring --size 1M --param bogus=1
bad "nosuchalgo" --platform "$P" --algo ring,nosuchalgo --size 1M
bad "only 8 devices" --platform "$P" --algo ring --size 1M --ranks 9
bad "size" --platform "$P" --algo ring --size 12Q
bad "size" --platform "$P" --algo ring --size 1G:1M
bad "model" --platform "$P" --algo ring --size 1M --model fancy
bad "format" --platform "$P" --algo ring --size 1M --format xml
bad "dtype" --platform "$P" --algo ring --size 1M --dtype complex
bad "exactly one" --platform "$P" --size 1M
bad "platform" --algo ring --size 1M
"$collstep" gen allreduce ring --ranks 4 -o "$tmp/r4.sched" 2>/dev/null
bad "4 ranks, not 8" --platform "$P" --schedule "$tmp/r4.sched" --ranks 8 --size 1M
printf 'n0_g0\n' >"$tmp/map"
bad "map" --platform "$P" --algo ring --size 1M --ranks 2 --map "$tmp/map"
bad "dag or actors" --platform "$P" --algo ring --size 1M --engine fast

# a simulation larger than the memory it may use: refused before it starts,
# with the estimate and its parts
CS_SIM_MAX_MEM=1K "$collstep" sim --platform "$P" --algo ring --size 1M >/dev/null 2>"$tmp/mem"
rc=$?
check "over CS_SIM_MAX_MEM: refused" [ $rc -ne 0 ]
check "over CS_SIM_MAX_MEM: the estimate" grep -q "needs about .* more (compiled schedules .*rank state .*transfers in flight" "$tmp/mem"
check "over CS_SIM_MAX_MEM: says why" grep -q "(CS_SIM_MAX_MEM)" "$tmp/mem"
# a schedule that cannot fit is refused before it is generated
(ulimit -v 3000000; "$collstep" gen allreduce ring --ranks 8192 -o "$tmp/r8k.sched") 2>"$tmp/gen8k"
rc=$?
check "gen over the memory: refused" [ $rc -ne 0 ]
check "gen over the memory: the estimate" grep -q "steps need about .* (the address-space limit" "$tmp/gen8k"
check "gen over the memory: no file" [ ! -e "$tmp/r8k.sched" ]
# both engines, the same table
"$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M --engine actors --format csv >"$tmp/ea" 2>/dev/null
"$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M --engine dag --format csv >"$tmp/ed" 2>/dev/null
check "engines: the same csv" cmp -s "$tmp/ea" "$tmp/ed"

# good runs
"$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M --format csv >"$tmp/csv" 2>"$tmp/err"
check "csv run exits 0" [ $? -eq 0 ]
check "csv has header + 6 rows" [ "$(wc -l <"$tmp/csv")" -eq 7 ]
check "csv header" grep -q '^algo,coll,size_bytes,count,dtype,redop,time_us,algbw_GBps,busbw_GBps,ranks,platform,model,transport,params$' "$tmp/csv"
check "csv row" grep -q '^"rd",allreduce,2097152,524288,float,sum,.*,"ideal","",""$' "$tmp/csv"
"$collstep" sim --platform "$P" --algo ring --size 1M --format json -o "$tmp/json" 2>"$tmp/err"
check "json run exits 0" [ $? -eq 0 ]
check "json fields" grep -q '"algo": "ring", "params": "nchunks=1 channels=1 local=1", "coll": "allreduce", "size_bytes": 1048576, "count": 262144, "dtype": "float", "redop": "sum", "time_us": ' "$tmp/json"
check "json is valid" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==1 and d[0]["ranks"]==8 and d[0]["busbw_GBps"]>0' "$tmp/json"
"$collstep" sim --platform "$P" --schedule "$tmp/r4.sched" --size 64K >"$tmp/table" 2>"$tmp/err"
check "schedule file run" grep -q '^ *65536 *16384 *float *sum' "$tmp/table"
# CS_LOG=info: the phases of the run with their wall times, the table unchanged
CS_LOG=info CS_LOG_SUBSYS=sim "$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M \
  --format csv >"$tmp/csv_info" 2>"$tmp/info"
check "info run: same csv" cmp -s "$tmp/csv" "$tmp/csv_info"
check "info: generated" grep -q 'generated allreduce rd on 8 ranks in [0-9.]* s' "$tmp/info"
check "info: compiled" grep -q 'compiled 2 schedule(s) (the largest: [0-9]* steps) on 1 thread(s) in [0-9.]* s' "$tmp/info"
check "info: loaded" grep -q "SimGrid platform $P loaded in [0-9.]* s" "$tmp/info"
check "info: simulated" grep -q 'simulated 6 of 6 instance(s) in [0-9.]* s' "$tmp/info"
# the compiler's split over threads (ranks in ranges of equal step counts,
# the first instance primed): same results whatever the number of threads
CS_LOG=info CS_LOG_SUBSYS=sim CS_SIM_THREADS=3 "$collstep" sim --platform "$P" --algo ring,rd \
  --size 1M:4M --format csv >"$tmp/csv_t3" 2>"$tmp/info_t3"
check "3 compile threads: same csv" cmp -s "$tmp/csv" "$tmp/csv_t3"
check "3 compile threads: info" grep -q 'on 3 thread(s)' "$tmp/info_t3"
CS_SIM_THREADS=8 "$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M \
  --format csv >"$tmp/csv_t8" 2>"$tmp/err"
check "8 compile threads (one rank each): same csv" cmp -s "$tmp/csv" "$tmp/csv_t8"
CS_SIM_THREADS=0 "$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M \
  --format csv >"$tmp/csv_t0" 2>"$tmp/err"
check "CS_SIM_THREADS=0: same csv" cmp -s "$tmp/csv" "$tmp/csv_t0"
check "CS_SIM_THREADS=0: warned" grep -q 'CS_SIM_THREADS=0 ignored: expected a number from 1 to 8' "$tmp/err"
# the generators' split over threads: same schedules, so the same results
CS_GEN_THREADS=5 "$collstep" sim --platform "$P" --algo ring,rd --size 1M:4M \
  --format csv >"$tmp/csv_g5" 2>"$tmp/err"
check "5 generator threads: same csv" cmp -s "$tmp/csv" "$tmp/csv_g5"
CS_GEN_THREADS=x "$collstep" sim --platform "$P" --algo ring --size 1M \
  --format csv >/dev/null 2>"$tmp/err"
check "CS_GEN_THREADS=x: warned" grep -q 'CS_GEN_THREADS=x ignored: expected a number from 1 to 8' "$tmp/err"
# a simulation killed before it removed its platform text leaves
# TMPDIR/cs_sim_<pid>_XXXXXX.xml: the next one removes those of processes
# that are gone, and nothing else
mkdir -p "$tmp/td"
dead=$(sh -c 'echo $$')
: >"$tmp/td/cs_sim_${dead}_AbC123.xml"
: >"$tmp/td/cs_sim_$$_AbC123.xml"
: >"$tmp/td/cs_sim_notes.xml"
TMPDIR="$tmp/td" "$collstep" sim --platform "$P" --algo ring --size 1M >/dev/null 2>"$tmp/err"
check "a gone process's platform text removed" [ ! -e "$tmp/td/cs_sim_${dead}_AbC123.xml" ]
check "a live process's kept" [ -e "$tmp/td/cs_sim_$$_AbC123.xml" ]
check "another file kept" [ -e "$tmp/td/cs_sim_notes.xml" ]
check "nothing of its own left" [ "$(ls "$tmp/td" | wc -l)" -eq 2 ]
"$collstep" sim --help >"$tmp/help"
check "help" grep -q -- "--platform" "$tmp/help"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
