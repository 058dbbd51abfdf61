#!/usr/bin/env bash
# slurm_test.sh - collstep under a real Slurm: a private one-node cluster
# (slurm-cluster.sh: Debian's slurmctld, slurmd, munge) started for the test
# in $TMPDIR and stopped on every exit.  The commands are those of
# docs/slurm.md and docs/validation.md, on one node with two tasks, smaller
# sizes and fewer iterations.
#   slurm_test.sh COLLSTEP CASE
# CASE:
#   run       srun --mpi=pmix -N 1 --ntasks-per-node=2 collstep run --check
#             over tcp;ofi_rxm and over --transport tcp --iface lo (the
#             interface by name): every row there, 0 wrong elements, both
#             ranks in one job (PMIx); srun without --mpi=pmix (MpiDefault
#             none: no PMIx) is refused saying how to start it; rank 1 of 3
#             killed mid-collective ends the job at once, named
#   batch     the same run in a batch script (sbatch --wait): srun in the
#             allocation, the job's output has the rows
#   array     sbatch --array=0-3 --wait: four tasks, each writes its
#             SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, all of one
#             array job; an array whose task 2 fails makes sbatch --wait fail
#   validate  srun --mpi=pmix collstep calibrate, platform show, then
#             validate --trace on the calibrated platform: every algorithm
#             and size measured and predicted, the ranks seen on one node,
#             live and simulated bytes equal per tier
#   cleanup   a cluster whose test gets SIGTERM, or its process group SIGINT
#             (Ctrl-C), while a job step runs: the test ends at once, and
#             nothing of the cluster is left running
# Exits 77 (with the reason) when not root or Slurm / munge are missing.
# shellcheck disable=SC2034 # variables that check's conditions (eval) read
set -u
cs=$1 case=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/slurm-cluster.sh"
[ -x "$cs" ] || { echo "SKIP: collstep not built ('$cs')"; exit 77; }
slurm_check || exit 77
PATH=$(dirname "$cs"):$PATH # the docs' commands say `collstep`
export PATH

fails=0
check() { # check COND MESSAGE
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/slurm-test.XXXXXX") || exit 2
cd "$work" || exit 2

# rows of `collstep run --check --format csv` for ALGO of 2 ranks with 0
# wrong elements, and all rows for it: "good all" (columns by header name)
rows() { # rows FILE ALGO
    awk -F, -v a="\"$2\"" '
        $1 == "algo" { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == a { n++; if (c["wrong"] && $c["wrong"] == 0 && $c["ranks"] == 2) g++ }
        END { print g + 0, n + 0 }' "$1"
}

case_run() {
    local rc i f p pid t0 victim=
    slurm_exec srun --mpi=pmix -N 1 --ntasks-per-node=2 collstep run --coll allreduce \
        --algo ring,rhd --size 1K:1M:32 --provider 'tcp;ofi_rxm' --check --iters 3 --warmup 1 \
        --timeout 20 --format csv >ofi.csv 2>ofi.err
    rc=$?
    check '[ $rc = 0 ]' "srun --mpi=pmix collstep run over tcp;ofi_rxm: exit $rc $(tail -2 ofi.err)"
    check '[ "$(rows ofi.csv ring)" = "3 3" ] && [ "$(rows ofi.csv rhd)" = "3 3" ]' \
        "ring and rhd, 3 sizes each, of 2 ranks (one job through PMIx), 0 wrong (ring $(rows ofi.csv ring), rhd $(rows ofi.csv rhd))"
    check 'grep -q "tcp;ofi_rxm" ofi.csv' "transport ofi/tcp;ofi_rxm in the rows"

    slurm_exec srun --mpi=pmix -N 1 --ntasks-per-node=2 collstep run --coll allreduce \
        --algo ring --size 64K,4M --transport tcp --iface lo --check --iters 3 --warmup 1 \
        --timeout 20 --format csv >tcp.csv 2>tcp.err
    rc=$?
    check '[ $rc = 0 ] && [ "$(rows tcp.csv ring)" = "2 2" ]' \
        "srun --mpi=pmix collstep run --transport tcp --iface lo: exit $rc, rows $(rows tcp.csv ring)"

    slurm_exec srun -N 1 --ntasks-per-node=2 collstep run --coll allreduce --algo ring \
        --size 1K --provider 'tcp;ofi_rxm' --timeout 10 >nopmix.out 2>&1
    rc=$?
    check '[ $rc != 0 ] && grep -q "srun --mpi=pmix" nopmix.out' \
        "srun without --mpi=pmix: refused (exit $rc), saying srun --mpi=pmix"

    # rank 1 of 3 killed mid-collective: the job ends (within --timeout, 6 s)
    # naming it
    slurm_exec srun --mpi=pmix -n 3 collstep run --coll allreduce --algo ring --size 8M \
        --iters 100000 --warmup 0 --provider 'tcp;ofi_rxm' --timeout 6 >kill.out 2>&1 &
    pid=$!
    for ((i = 0; i < 60; i++)); do
        [ -z "$victim" ] || break
        sleep 0.25
        for f in $(grep -lzx SLURM_PROCID=1 /proc/[0-9]*/environ 2>/dev/null); do
            p=${f#/proc/} && p=${p%/environ}
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = collstep ] &&
                grep -qzxF "SLURM_CONF=$SLURM_CONF_PATH" "/proc/$p/environ" 2>/dev/null && victim=$p
        done
    done
    sleep 1 # in the collective
    t0=$SECONDS
    [ -n "$victim" ] && kill -KILL "$victim"
    wait "$pid"
    rc=$?
    check '[ -n "$victim" ] && [ $rc != 0 ] && [ $((SECONDS - t0)) -le 12 ]' \
        "rank 1 killed: srun exits $rc after $((SECONDS - t0)) s"
    # srun ends the step when a task is killed, and names it; a rank that saw
    # it first names it too
    check 'grep -qE "task 1: Killed|rank 1" kill.out' \
        "task 1 named: $(grep -E "task 1: Killed|rank 1" kill.out | tr '\n' ';')"
}

case_batch() {
    local rc
    cat >job.sh <<'EOF'
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=8 --time=00:10:00
srun --mpi=pmix collstep run --coll allreduce --algo ring,rhd --size 1K:1M:32 \
    --provider 'tcp;ofi_rxm' --check --iters 3 --warmup 1 --timeout 20 --format csv
EOF
    # one node here: the options override the script's #SBATCH line
    slurm_exec sbatch --wait -N 1 --ntasks-per-node=2 -o batch.out -e batch.err job.sh >sbatch.out 2>&1
    rc=$?
    check '[ $rc = 0 ]' "sbatch --wait of srun --mpi=pmix collstep run: exit $rc $(tail -2 batch.err 2>/dev/null)"
    check '[ -f batch.out ] && [ "$(rows batch.out ring)" = "3 3" ] && [ "$(rows batch.out rhd)" = "3 3" ]' \
        "the job's output: ring and rhd, 3 sizes, 0 wrong ($( [ -f batch.out ] && rows batch.out ring))"
}

case_array() {
    local rc i ok=1 ids
    cat >task.sh <<'EOF'
#!/bin/sh
echo "$SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_JOB_ID" >"task-$SLURM_ARRAY_TASK_ID.txt"
EOF
    slurm_exec sbatch --array=0-3 --wait -o /dev/null task.sh >sbatch.out 2>&1
    rc=$?
    check '[ $rc = 0 ]' "sbatch --array=0-3 --wait: exit $rc $(cat sbatch.out)"
    for i in 0 1 2 3; do
        [ "$(cut -d' ' -f1,2 "task-$i.txt" 2>/dev/null)" = "$i 4" ] || ok=0
    done
    check '[ $ok = 1 ]' "four tasks, each wrote its id and the count 4: $(cat task-*.txt 2>/dev/null | tr '\n' ';')"
    ids=$(cut -d' ' -f3 task-*.txt 2>/dev/null | sort -u | wc -l)
    check '[ "$ids" = 1 ] && [ "$(ls task-*.txt | wc -l)" = 4 ]' "all four of one array job, no other task"

    cat >fail.sh <<'EOF'
#!/bin/sh
[ "$SLURM_ARRAY_TASK_ID" = 2 ] && exit 3
exit 0
EOF
    slurm_exec sbatch --array=0-3 --wait -o /dev/null fail.sh >fail.out 2>&1
    rc=$?
    check '[ $rc != 0 ]' "an array whose task 2 exits 3: sbatch --wait fails (exit $rc)"
}

case_validate() {
    local rc n bad
    slurm_exec srun --mpi=pmix -N 1 --ntasks-per-node=2 collstep calibrate --transport tcp \
        --iface lo --size 1:4M:4 --budget 0.05 --timeout 30 -o cluster.xml >calib.out 2>&1
    rc=$?
    check '[ $rc = 0 ] && [ -s cluster.xml ] && [ -s cluster.json ]' \
        "srun --mpi=pmix collstep calibrate: exit $rc, cluster.xml $(tail -1 calib.out)"
    collstep platform show cluster.xml >show.out 2>&1
    rc=$?
    check '[ $rc = 0 ] && grep -q "2 devices" show.out' "collstep platform show cluster.xml: exit $rc"
    slurm_exec srun --mpi=pmix -N 1 --ntasks-per-node=2 collstep validate --transport tcp \
        --iface lo --platform cluster.xml --coll allreduce --algo ring,rhd,dbtree,hier \
        --size 1M:4M:4 --iters 3 --warmup 1 --timeout 30 --trace validate-trace >val.out 2>val.err
    rc=$?
    check '[ $rc = 0 ]' "srun --mpi=pmix collstep validate --trace: exit $rc $(tail -2 val.err)"
    check 'grep -q "2 ranks on 1 nodes" val.out' "the two ranks seen on one node"
    # rows: algo size count type redop algbw busbw measured spread predicted error
    n=$(awk '$1 ~ /^(ring|rhd|dbtree|hier)$/ && $2 ~ /^(1048576|4194304)$/ && NF == 11 &&
             $8 > 0 && $10 > 0 { n++ } END { print n + 0 }' val.out)
    check '[ "$n" = 8 ]' "4 algorithms x 2 sizes measured and predicted ($n rows)"
    # compare.csv: platform,model,algo,size_bytes,tier,live_bytes,sim_bytes,bytes_match,...
    n=$(awk -F, 'NR > 1 { n++ } END { print n + 0 }' validate-trace/compare.csv 2>/dev/null)
    bad=$(awk -F, 'NR > 1 && !($6 == $7 && $6 > 0 && $8 == 1) { n++ } END { print n + 0 }' \
        validate-trace/compare.csv 2>/dev/null)
    check '[ "${n:-0}" -ge 8 ] && [ "$bad" = 0 ]' "live and simulated bytes equal per tier ($n rows, $bad differ)"
}

# A child test (this script's library, its own cluster) that runs a job
# step; once the step runs, SIG: TERM to the child alone (as a harness ends
# it), or INT to its whole process group (Ctrl-C in a terminal: the daemons
# get it too).  The child ends at once, and nothing of its cluster is left.
cleanup_after() { # cleanup_after TERM|INT
    local sig=$1 child rc i dir=$work/child-$1 n left
    # its own process group, SIGINT not ignored (as a background job of a
    # script it would be, and bash could not trap it)
    setsid python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("bash", ["bash", "-c", sys.argv[1], "child"] + sys.argv[2:])
' '. "$1/slurm-cluster.sh"
       slurm_start "$2" || exit 1
       slurm_exec srun -N 1 -n 2 sleep 300' "$here" "$dir" >"child-$sig.out" 2>&1 &
    child=$!
    for ((i = 0; i < 120; i++)); do
        [ -f "$dir/slurm.conf" ] &&
            [ -n "$(SLURM_CONF=$dir/slurm.conf squeue -h -t R -o %i 2>/dev/null)" ] && break
        sleep 0.25
    done
    check '[ $i -lt 120 ]' "$sig: the child's cluster runs its job step"
    # every process of that cluster: the daemons (their command lines name
    # DIR), the step daemons, srun and the tasks (their environment has the
    # cluster's SLURM_CONF)
    procs() {
        local p
        for p in /proc/[0-9]*; do
            { tr '\0' '\n' <"$p/cmdline" | grep -q -- "$dir/" ||
                grep -qzxF "SLURM_CONF=$dir/slurm.conf" "$p/environ"; } 2>/dev/null &&
                echo "${p#/proc/}"
        done
    }
    n=$(procs | wc -l)
    check '[ "$n" -ge 7 ]' "$sig: munged, slurmctld, slurmd, srun, slurmstepd, 2 tasks run ($n processes)"
    case $sig in
    TERM) kill -TERM "$child" ;;
    INT) kill -INT -- "-$child" ;;
    esac
    for ((i = 0; i < 80; i++)); do
        kill -0 "$child" 2>/dev/null || break
        sleep 0.25
    done
    wait "$child"
    rc=$?
    check '[ $rc = $((128 + $(kill -l "$sig"))) ]' "$sig: the child ended by SIG$sig in $((i / 4)) s (exit $rc)"
    left=$(procs | while read -r p; do echo "$p:$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done)
    check '[ -z "$left" ]' "$sig: nothing of the cluster left: ${left:-none}"
    # leave nothing behind even when this check failed
    for p in $(procs); do kill -KILL "$p" 2>/dev/null; done
}

case_cleanup() {
    cleanup_after TERM
    cleanup_after INT
}

case $case in
run | batch | array | validate) ;;
cleanup)
    case_cleanup
    [ $fails = 0 ] || exit 1
    exit 0
    ;;
*) echo "usage: slurm_test.sh COLLSTEP run|batch|array|validate|cleanup" >&2; exit 2 ;;
esac

slurm_start "$work/slurm" || exit 1
SLURM_CONF_PATH=$work/slurm/slurm.conf
echo "cluster: $(slurm_exec sinfo -h -o '%P %D %c %t %N') in $work/slurm"
"case_$case"
if [ $fails != 0 ]; then
    echo "---- $SLURM_STEPD_LOG (last 15 lines)"
    tail -n 15 "$work/slurm/$SLURM_STEPD_LOG"
fi
slurm_stop
[ $fails = 0 ] || exit 1
exit 0
