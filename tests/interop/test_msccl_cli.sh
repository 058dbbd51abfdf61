#!/usr/bin/env bash
# test_msccl_cli.sh - MSCCL XML through the command line (issue #20).
#   test_msccl_cli.sh COLLSTEP XMLDIR unit   import, export, verify, stats, bad input
#   test_msccl_cli.sh COLLSTEP XMLDIR sim    every XML simulated on a preset with
#                                           enough GPUs
#   test_msccl_cli.sh COLLSTEP XMLDIR exec   every XML run live at its rank count
#                                           (shm, --check, 0 wrong) under mpirun
set -u
B=$1 X=$2 mode=$3
. "$(dirname "$0")/../exec/exec_launch.sh"
[ -x "$B" ] || { echo "SKIP: collstep not built"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
expect() { # expect RC PATTERN CMD...: exit code RC and PATTERN in the output
    local want=$1 pat=$2; shift 2
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || printf '%s\n' "$out" | grep -q -- "$pat"; }; then ok "$*"
    else bad "$* (rc $rc, want $want, pattern '$pat')"; printf '%s\n' "$out" | tail -5; fi
}
ngpus() { grep -o 'ngpus="[0-9]*"' "$1" | head -1 | tr -dc 0-9; }
# The bytes of float elements that move for SIZE bytes on P ranks: whole
# blocks of one element per rank for allgather, reducescatter, alltoall (as
# nccl-tests rounds).
blocked() { grep -q 'coll="\(allgather\|reducescatter\|alltoall\)"' "$1"; }
moved() { # moved FILE P SIZE
    if blocked "$1"; then echo $(($3 / (4 * $2) * 4 * $2)); else echo $(($3 / 4 * 4)); fi
}
# A preset with at least P GPUs: dgx1 (8 per node) or summit (6 per node).
platform_for() {
    local p=$1
    if [ "$p" -le 8 ]; then echo "dgx1-v100-ib100:nodes=1"
    else echo "summit:nodes=$(((p + 5) / 6))"; fi
}

case $mode in
unit)
    for f in "$X"/*.xml; do
        expect 0 "OK: " "$B" verify "$f"
        expect 0 "collstep-schedule 1" "$B" import msccl "$f"
    done
    expect 0 "-> $T/ring.sched" "$B" import msccl "$X/allreduce_ring4.xml" -o "$T/ring.sched"
    expect 0 "OK: allreduce on 4 ranks" "$B" verify "$T/ring.sched"
    expect 0 "^0 0 .*allreduce_ring4.xml:[0-9]*: gpu 0 tb 0 step 0$" "$B" import msccl --origins "$X/allreduce_ring4.xml"
    expect 0 "alltoall msccl name=a2a_p8" "$B" stats "$X/alltoall_p8_2ch.xml"
    expect 2 "not for out-of-place calls" "$B" import msccl --outofplace "$X/allgather_ring3_inplace.xml"
    # export: a registry algorithm, a schedule file, back through import
    expect 0 "" "$B" export msccl --coll allreduce --algo ring --ranks 8 -o "$T/ring8.xml"
    expect 0 "OK: allreduce on 8 ranks" "$B" verify "$T/ring8.xml"
    expect 0 "<algo name=\"msccl\"" "$B" export msccl "$T/ring.sched"
    expect 0 "" "$B" export msccl --coll alltoall --algo pairwise --ranks 6 --min-bytes 1M --max-bytes 64M -o "$T/a2a.xml"
    expect 0 "minBytes=\"1048576\" maxBytes=\"67108864\"" cat "$T/a2a.xml"
    expect 0 "OK: alltoall on 6 ranks" "$B" verify "$T/a2a.xml"
    expect 2 "MSCCL's XML has no root" "$B" export msccl --coll broadcast --algo chain --ranks 4
    # the executor's limits (64 steps per threadblock), and past them on request
    expect 2 "MSCCL's executor takes at most 64" "$B" export msccl --coll allreduce --algo ring --ranks 40 -o "$T/r40.xml"
    expect 0 "" "$B" export msccl --coll allreduce --algo ring --ranks 40 --no-limits -o "$T/r40.xml"
    expect 0 "OK: allreduce on 40 ranks" "$B" verify "$T/r40.xml"
    echo "not xml" > "$T/keep.txt"
    expect 2 "keep.txt exists and is not" "$B" export msccl --coll allreduce --algo ring --ranks 4 -o "$T/keep.txt"
    expect 0 "not xml" cat "$T/keep.txt"
    # bad input: exit 2 with FILE:LINE
    printf '<?xml version="1.0"?>\n<algo name="x" ngpus="2" nchunksperloop="2" coll="allreduce">\n<gpu id="0" i_chunks="2" o_chunks="2"/>\n</algo>\n' > "$T/short.xml"
    expect 2 "short.xml:2: ngpus=\"2\" but the algo has 1 <gpu> elements" "$B" verify "$T/short.xml"
    printf '<algo name="x"\n  <gpu>\n' > "$T/broken.xml"
    expect 2 "broken.xml:2: malformed XML" "$B" verify "$T/broken.xml"
    sed 's/type="rrcs" srcbuf="o" srcoff="3"/type="rrx" srcbuf="o" srcoff="3"/' "$X/allreduce_ring4.xml" > "$T/unknown.xml"
    expect 2 "unknown.xml:11: type: expected a step type" "$B" import msccl "$T/unknown.xml"
    sed 's/type="rrcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0"/type="rcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0"/' "$X/allreduce_ring4.xml" > "$T/wrong.xml"
    expect 1 "INCORRECT" "$B" verify "$T/wrong.xml"
    ;;
sim)
    for f in "$X"/*.xml; do
        p=$(ngpus "$f")
        expect 0 "^ *$(moved "$f" "$p" 1048576) " "$B" sim --platform "$(platform_for "$p")" --schedule "$f" --size 1M
    done
    expect 0 "^ *1048576 " "$B" sim --platform summit:nodes=3 --schedule "$X/allreduce_ring_p16_2ch.xml" --size 1M
    ;;
exec)
    have_mpirun || { echo "SKIP: no mpirun"; exit 77; }
    for f in "$X"/*.xml; do
        p=$(ngpus "$f")
        [ "$p" -le 16 ] || continue
        # sizes MSCCL serves (multiples of nchunksperloop elements) and one
        # it does not (collstep runs it anyway: balanced chunks): an odd
        # element count, per rank for the blocked collectives
        odd=4100
        blocked "$f" && odd=$((4 * 1025 * p))
        out=$(launch_mpi "$p" "$B" run --schedule "$f" --transport shm --check --size "4K,1M,$odd" \
              --iters 2 --warmup 0 --timeout 60 --format csv 2>&1 </dev/null)
        rc=$?
        rows=$(printf '%s\n' "$out" | grep -c '^"msccl"')
        wrong=$(printf '%s\n' "$out" | grep '^"msccl"' | awk -F, '$NF != 0' | wc -l)
        if [ $rc -eq 0 ] && [ "$rows" -eq 3 ] && [ "$wrong" -eq 0 ]; then ok "run $f on $p ranks"
        else bad "run $f on $p ranks: rc=$rc rows=$rows wrong-rows=$wrong"; printf '%s\n' "$out" | tail -8; fi
    done
    ;;
esac
echo "$fails failed"
[ "$fails" -eq 0 ]
