#!/usr/bin/env bash
# gpu_cli.sh - `collstep run --transport nccl` end to end.
#   gpu_cli.sh RUN nodevice   without a device: exit 3 and "no CUDA device/driver:
#                             cudaGetDeviceCount: ... (N)" (skips where a GPU works)
#   gpu_cli.sh RUN allreduce  1 rank: allreduce ring --check --baseline nccl over the
#                             sweep 4:16M:4: for every size of the sweep exactly one
#                             ring row and one nccl row, each with 0 wrong (skips
#                             without GPU)
#   gpu_cli.sh RUN matrix     every collective/algorithm on as many ranks as GPUs
#                             (max 8): one GPU through the RANK / WORLD_SIZE /
#                             MASTER_ADDR / MASTER_PORT bootstrap, several under
#                             mpirun, or as many env-bootstrapped local processes
#                             where there is no mpirun (skips without GPU)
# CSV is read with python3's csv module (quoted strings such as "nccl").
set -uo pipefail
run=$1 mode=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
port=$((20000 + $$ % 20000))
env1() { port=$((port + 1)); env RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@"; }
# The probe: does a one-rank NCCL run work here?  A failure that is not the
# missing device (the launcher-less bootstrap's port taken by a test running
# beside this one) is tried again on the next port.
for try in 1 2 3; do
    env1 "$run" run --transport nccl --coll allreduce --algo ring --size 64K --iters 1 \
        --warmup 0 >"$tmp/probe" 2>"$tmp/probe.err"
    probe=$?
    nodev=0
    grep -q "no CUDA device/driver: cudaGetDeviceCount: " "$tmp/probe.err" && nodev=1
    [ $probe = 0 ] || [ $nodev = 1 ] && break
done

# The rows of a CSV result as "algo size_bytes wrong", one per line.
csv_rows() {
    python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["algo"], r["size_bytes"], r.get("wrong", "-"))' "$1"
}

# The sizes of a sweep LO:HI:F in bytes (integer F), the rule of collstep run:
# LO, LO*F, ... while below HI, then HI.
sweep() {
    local b=$1 hi=$2 f=$3
    while :; do
        echo "$b"
        [ "$b" -ge "$hi" ] && break
        b=$((b * f > b ? b * f : b + 1)); [ "$b" -gt "$hi" ] && b=$hi
    done
}

case $mode in
nodevice)
    if [ $nodev = 0 ] && [ $probe = 0 ]; then echo "SKIP: a CUDA device works here"; exit 77; fi
    grep -E "no CUDA device/driver: cudaGetDeviceCount: .*\([0-9]+\)" "$tmp/probe.err" ||
        { echo "FAIL: message"; cat "$tmp/probe.err"; exit 1; }
    [ $probe = 3 ] || { echo "FAIL: exit code $probe, expected 3"; exit 1; }
    echo "1 passed, 0 failed"
    ;;
allreduce)
    [ $nodev = 0 ] || { echo "SKIP: $(cat "$tmp/probe.err")"; exit 77; }
    command -v python3 >/dev/null || { echo "SKIP: no python3 to read the CSV"; exit 77; }
    env1 "$run" run --transport nccl --coll allreduce --algo ring --size 4:16M:4 \
        --check --baseline nccl --format csv >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/out" "$tmp/err"
    [ $rc = 0 ] || { echo "FAIL: exit $rc"; exit 1; }
    csv_rows "$tmp/out" >"$tmp/rows" || { echo "FAIL: the CSV does not parse"; exit 1; }
    sweep 4 $((16 << 20)) 4 >"$tmp/sizes"
    nsizes=$(wc -l <"$tmp/sizes")
    pass=0 failn=0
    while read -r size; do
        for algo in ring nccl; do
            good=$(awk -v a="$algo" -v s="$size" '$1 == a && $2 == s && $3 == "0"' "$tmp/rows" | wc -l)
            any=$(awk -v a="$algo" -v s="$size" '$1 == a && $2 == s' "$tmp/rows" | wc -l)
            if [ "$good" = 1 ] && [ "$any" = 1 ]; then pass=$((pass + 1))
            else failn=$((failn + 1)); echo "FAIL: size $size: $any $algo rows, $good with 0 wrong"; fi
        done
    done <"$tmp/sizes"
    rows=$(wc -l <"$tmp/rows")
    [ "$rows" = $((2 * nsizes)) ] || { failn=$((failn + 1)); echo "FAIL: $rows rows for $nsizes sizes"; }
    echo "$pass passed, $failn failed ($nsizes sizes)"
    [ $failn = 0 ]
    ;;
matrix)
    [ $nodev = 0 ] || { echo "SKIP: $(cat "$tmp/probe.err")"; exit 77; }
    n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU'); [ "$n" -ge 1 ] || n=1; [ "$n" -le 8 ] || n=8
    # ranks(ARGS...): collstep run ARGS on n ranks, output of rank 0 (and errors of all)
    ranks() {
        if [ "$n" = 1 ]; then
            env1 timeout 300 "$run" run "$@"
        elif command -v mpirun >/dev/null; then
            timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$n" "$run" run "$@"
        else
            port=$((port + 1))
            local pids=() r rc=0
            for ((r = 0; r < n; r++)); do
                RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                    timeout 300 "$run" run "$@" >"$tmp/rank$r" 2>&1 & pids+=($!)
            done
            for r in "${!pids[@]}"; do wait "${pids[$r]}" || rc=$?; done
            cat "$tmp/rank0"; return $rc
        fi
    }
    launcher="env bootstrap"
    if [ "$n" -gt 1 ]; then
        if command -v mpirun >/dev/null; then launcher=mpirun; else launcher="env bootstrap x $n"; fi
    fi
    echo "matrix on $n GPU(s), launcher $launcher"
    pass=0 failn=0
    for coll in allreduce reduce-scatter allgather broadcast reduce alltoall; do
        for algo in $("$run" algos 2>/dev/null | awk -v c="$coll" '$1 == c { print $2 }'); do
            op=sum; case $coll in allgather|broadcast|alltoall) op=max ;; esac
            if ! "$run" gen "$coll" "$algo" --ranks "$n" >"$tmp/g" 2>&1; then
                echo "($coll $algo does not support $n ranks)"; continue
            fi
            if grep -q "^collstep-schedule 2" "$tmp/g"; then # switch steps: run refuses them
                echo "($coll $algo on $n ranks has switch steps)"; continue
            fi
            if ranks --transport nccl --coll "$coll" --algo "$algo" --op "$op" --size 1000,1M \
                --iters 2 --warmup 1 --check --baseline nccl --timeout 60 >"$tmp/m" 2>&1; then
                pass=$((pass + 1))
            else
                failn=$((failn + 1)); echo "FAIL: $coll $algo on $n GPUs"; cat "$tmp/m"
            fi
        done
    done
    echo "$pass passed, $failn failed"
    [ $failn = 0 ] && [ $pass -gt 0 ]
    ;;
*) echo "usage: gpu_cli.sh RUN nodevice|allreduce|matrix"; exit 2 ;;
esac
