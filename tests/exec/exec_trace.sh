#!/usr/bin/env bash
# exec_trace.sh - `collstep run --trace DIR` and the result layouts (env
# bootstrap, shm provider or another transport, so the test controls every
# rank):
#   trace    3 ranks placed on hosts a, a, b (--trace-host): trace.json and
#            summary.json parse; the step count is the schedule's; the bytes
#            of tier host / network are the schedule's traffic between ranks
#            of the same / different hosts; clock offsets on one machine are
#            near 0; `collstep trace` reads the directory.
#   sweep    2 sizes: DIR/<algo>-<bytes>/ each and DIR/index.csv.
#   fail     an unwritable DIR: every rank fails, nothing is left.
#   results  JSON and CSV of `collstep run` have the keys / columns of
#            `collstep sim` (plus `wrong` with --check).
#   exec_trace.sh COLLSTEP MODE [TRANSPORT]   (TRANSPORT: shm provider by
#   default, native = --transport shm, sock = --transport tcp; see
#   exec_launch.sh)
set -u
. "$(dirname "$0")/exec_launch.sh"
pick_run "$1"
cs=$1 mode=$2 prov=${3:-shm}
have_transport "$prov" || { echo "SKIP: transport $prov missing"; exit 77; }
transport_args "$prov"
tpa="${TP[*]}" # word-split again in the args functions
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d)
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 failn=0
check() { if eval "$1"; then pass=$((pass + 1)); else echo "FAIL: $2"; failn=$((failn + 1)); fi; }

# run_ranks N ARGS_FN: N ranks with the env bootstrap; rcs[r]; out$r / err$r
run_ranks() {
    local n=$1 fn=$2 port r; port=$(free_port)
    pids=()
    for ((r = 0; r < n; r++)); do
        env -u PMIX_RANK -u PMIX_NAMESPACE CS_LOG=info RANK=$r WORLD_SIZE=$n \
            MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 60 "${RUN[@]}" $($fn $r) \
            >"$tmp/out$r" 2>"$tmp/err$r" </dev/null &
        pids+=($!)
    done
    rcs=()
    for r in "${!pids[@]}"; do wait "${pids[$r]}"; rcs[$r]=$?; done
    pids=()
}

case $mode in
trace)
    for algo in ring rhd; do
        "$cs" gen allreduce $algo --ranks 3 -o "$tmp/$algo.cs" || { echo "FAIL: gen"; exit 1; }
        chunks=$(awk '$1 == "collective" { for (i = 1; i < NF; i++) if ($i == "chunks") print $(i + 1) }' "$tmp/$algo.cs")
        size=$((4 * chunks * 1000)) # 1000 elements per chunk exactly
        rm -rf "$tmp/tr"
        args() { echo "--coll allreduce --algo $algo --size $size --check --iters 3 --warmup 1 $tpa --format csv --trace $tmp/tr --trace-no-plot --trace-ranks 0 --trace-host $([ "$1" = 2 ] && echo b || echo a)"; }
        run_ranks 3 args
        check '[ "${rcs[*]}" = "0 0 0" ]' "$algo: exit codes ${rcs[*]}"
        check 'grep -q "^\"$algo\",allreduce,$size,.*,0$" "$tmp/out0"' "$algo: no row with 0 wrong"
        cat "$tmp/out0"
        python3 "$(dirname "$0")/trace_check.py" "$tmp/$algo.cs" "$tmp/tr" 4000 a,a,b
        check '[ $? = 0 ]' "$algo: trace contents"
        for r in 1 2; do
            off=$(sed -n 's/.*clock offset to rank 0: \(-\?[0-9]*\) ns.*/\1/p' "$tmp/err$r")
            echo "rank $r clock offset: ${off:-none} ns"
            check '[ -n "$off" ] && [ "${off#-}" -lt 2000000 ]' "$algo: rank $r clock offset '$off' ns (want |x| < 2 ms)"
        done
        check '"$cs" trace "$tmp/tr" | grep -q "network"' "$algo: collstep trace cannot read it"
    done
    ;;
sweep)
    args() { echo "--coll allreduce --algo ring --size 4K,64K --iters 2 --warmup 1 $tpa --trace $tmp/tr --format json"; }
    run_ranks 2 args
    check '[ "${rcs[*]}" = "0 0" ]' "exit codes ${rcs[*]}"
    check '[ -f "$tmp/tr/index.csv" ] && [ "$(grep -c ring "$tmp/tr/index.csv")" = 2 ]' "index.csv lists 2 instances"
    for s in 4096 65536; do
        check 'python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/tr/ring-$s/summary.json"' "ring-$s/summary.json"
        if command -v gnuplot >/dev/null; then
            check '[ -s "$tmp/tr/ring-$s/utilization.png" ]' "ring-$s/utilization.png"
        fi
    done
    check '! ls -d "$tmp"/tr.* 2>/dev/null' "a temporary directory is left"
    ;;
fail)
    args() { echo "--coll allreduce --algo ring --size 4K --iters 2 --warmup 1 $tpa --trace $tmp/missing/tr"; }
    run_ranks 2 args
    # a trace directory that cannot be made is refused before the run, a usage
    # error every rank exits with: rank 0 names the path, the others rank 0
    check '[ "${rcs[0]}" = 2 ] && [ "${rcs[1]}" = 2 ]' "exit codes ${rcs[*]} (want 2 2)"
    cat "$tmp/err0" "$tmp/err1"
    check 'grep -q -- "--trace $tmp/missing/tr: .*does not exist" "$tmp/err0"' "rank 0 does not name the trace path"
    check 'grep -q "rank 0 refused the output paths" "$tmp/err1"' "rank 1 does not say rank 0 refused"
    check '[ ! -e "$tmp/missing" ]' "something was created"
    ;;
results)
    plat=summit:nodes=1
    "$cs" sim --platform $plat --algo ring --ranks 2 --size 4K --format json >"$tmp/sim.json" &&
        "$cs" sim --platform $plat --algo ring --ranks 2 --size 4K --format csv >"$tmp/sim.csv"
    check '[ $? = 0 ]' "collstep sim failed"
    for f in json csv; do
        args() { echo "--coll allreduce --algo ring --size 4K --iters 2 --warmup 1 $tpa --format $f"; }
        run_ranks 2 args
        cp "$tmp/out0" "$tmp/run.$f"
        args() { echo "--coll allreduce --algo ring --size 4K --iters 2 --warmup 1 $tpa --format $f --check"; }
        run_ranks 2 args
        cp "$tmp/out0" "$tmp/check.$f"
    done
    python3 - "$tmp" <<'EOF'
import json, sys
t = sys.argv[1]
sim, run, chk = (json.load(open("%s/%s.json" % (t, n))) for n in ("sim", "run", "check"))
bad = 0
ks, kr, kc = list(sim[0]), list(run[0]), list(chk[0])
if ks != kr: print("FAIL: json keys sim %s run %s" % (ks, kr)); bad += 1
if kc != ks + ["wrong"] or chk[0]["wrong"] != 0: print("FAIL: --check keys %s" % kc); bad += 1
hs, hr, hc = (open("%s/%s.csv" % (t, n)).readline().strip() for n in ("sim", "run", "check"))
if hs != hr: print("FAIL: csv header sim %s run %s" % (hs, hr)); bad += 1
if hc != hs + ",wrong": print("FAIL: --check csv header %s" % hc); bad += 1
print("json keys", kr)
sys.exit(1 if bad else 0)
EOF
    check '[ $? = 0 ]' "layouts differ"
    ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
