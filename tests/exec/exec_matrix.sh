#!/usr/bin/env bash
# exec_matrix.sh - every registered algorithm (matching FILTER, an ERE on
# "collective algorithm") on NP ranks over TRANSPORT (a libfabric provider,
# native: --transport shm, or sock: --transport tcp; see exec_launch.sh),
# started by LAUNCH (mpi or env), with --check at one element per block, an
# odd count that does not divide (rounded down to whole blocks for the
# blocked collectives, as nccl-tests does), and a mid size (above the eager
# limit of both shared-memory transports and of the tcp transport).  Fails on
# any wrong element, non-zero exit, or missing row; exits 77 when mpirun /
# the transport is missing.  (A size below one element is a usage error.)
#   exec_matrix.sh COLLSTEP LIST_BIN LAUNCH TRANSPORT NP [FILTER]
set -u
run=$1 list=$2 launch=$3 prov=$4 np=$5 filter=${6:-.}
. "$(dirname "$0")/exec_launch.sh"
pick_run "$run"
transport_args "$prov"
if [ "$launch" = mpi ] && ! have_mpirun; then echo "SKIP: no mpirun"; exit 77; fi
if ! have_transport "$prov"; then echo "SKIP: transport $prov missing"; exit 77; fi

sizes="$((4 * np)),$((4 * (1237 * np + 3))),$((4 * (65539 * np + 1)))"
pass=0 failn=0
while read -r coll algo; do
    out=$(launch_"$launch" "$np" "${RUN[@]}" --coll "$coll" --algo "$algo" --size "$sizes" --check \
          --iters 2 --warmup 0 "${TP[@]}" --timeout 20 --format csv 2>&1 </dev/null)
    rc=$?
    # CSV of cs_results: "algo",coll,size_bytes,...,platform,model,transport,params,wrong
    rows=$(printf '%s\n' "$out" | grep -c "^\"$algo\",$coll,")
    bad=$(printf '%s\n' "$out" | grep "^\"$algo\",$coll," | awk -F, '$15 != 0' | wc -l)
    if [ $rc -eq 2 ] && printf '%s' "$out" | grep -q "not support\|unsupported"; then
        echo "ok   $coll $algo P=$np: not supported for this P (said so)"
        pass=$((pass + 1))
    elif [ $rc -ne 0 ] || [ "$rows" -ne 3 ] || [ "$bad" -ne 0 ]; then
        echo "FAIL $coll $algo P=$np $prov $launch: rc=$rc rows=$rows wrong-rows=$bad"
        printf '%s\n' "$out" | tail -15
        failn=$((failn + 1))
    else
        echo "ok   $coll $algo P=$np"
        pass=$((pass + 1))
    fi
done < <("$list" | grep -E -- "$filter")
[ $((pass + failn)) -gt 0 ] || { echo "no algorithm matched '$filter'"; failn=1; }
echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
