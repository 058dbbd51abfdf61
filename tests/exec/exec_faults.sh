#!/usr/bin/env bash
# exec_faults.sh - failure behaviour of `collstep run` (env bootstrap, so
# the test controls every process):
#   kill PROVIDER      3 ranks run a long allreduce; rank 1 is killed with
#                      SIGKILL mid-collective; ranks 0 and 2 must exit
#                      non-zero within the --timeout (plus slack), and their
#                      messages must name rank 1.  With --trace: no trace
#                      directory (nor its temporary) is left behind.
#   mismatch PROVIDER  rank 1 is started with another --size, then another
#                      --algo: every rank exits non-zero quickly, naming
#                      rank 1 and saying what differs.
#   split PROVIDER     --max-msg 1000 forces split messages; results exact.
#   nolib PROVIDER     (libfabric providers) CS_LIBFABRIC names a library that
#                      is missing, then one that is not libfabric: every rank
#                      exits non-zero at once, saying it cannot use libfabric.
#                      And collstep itself does not link libfabric (loading it
#                      cost every command 0.2 s, see exec/tp_ofi.c).
#   exec_faults.sh COLLSTEP MODE TRANSPORT   (a libfabric provider, or
#   native = --transport shm, sock = --transport tcp; see exec_launch.sh)
set -u
. "$(dirname "$0")/exec_launch.sh"
pick_run "$1"
mode=$2 prov=$3
have_transport "$prov" || { echo "SKIP: transport $prov missing"; exit 77; }
transport_args "$prov"
tpa="${TP[*]}" # word-split again in the args functions
tmp=$(mktemp -d)
trap 'kill -9 "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 failn=0
check() { if eval "$1"; then pass=$((pass + 1)); else echo "FAIL: $2"; failn=$((failn + 1)); fi; }

# start N ARGS_FOR_RANK_FN: starts ranks, fills pids[]
start() {
    local n=$1 fn=$2 port r; port=$(free_port)
    pids=()
    for ((r = 0; r < n; r++)); do
        env -u PMIX_RANK -u PMIX_NAMESPACE CS_LOG=${CS_LOG:-warn} RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$port "${RUN[@]}" $($fn $r) >"$tmp/out$r" 2>"$tmp/err$r" </dev/null &
        pids+=($!)
    done
}

# wait_all LIMIT_S: waits for pids; rcs[r] = exit code or "hang"
wait_all() {
    local limit=$1 t0=$SECONDS r
    rcs=()
    for r in "${!pids[@]}"; do
        while kill -0 "${pids[$r]}" 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do
            sleep 0.2
        done
        if kill -0 "${pids[$r]}" 2>/dev/null; then rcs[$r]=hang; else wait "${pids[$r]}"; rcs[$r]=$?; fi
    done
    elapsed=$((SECONDS - t0))
}

case $mode in
kill)
    timeout=6
    args_kill() { echo "--coll allreduce --algo ring --size 8M --iters 100000 --warmup 0 $tpa --timeout $timeout --trace $tmp/trace"; }
    CS_LOG=info start 3 args_kill
    # start-up done (clock aligned for the trace), then let the ranks run a while
    for ((i = 0; i < 200; i++)); do grep -q "clock offset" "$tmp/err0" 2>/dev/null && break; sleep 0.1; done
    check '[ $i -lt 200 ]' "rank 0 never got past the start-up"
    sleep 1.5
    kill -9 "${pids[1]}"
    killed=${pids[1]}
    wait_all $((timeout + 20))
    for r in 0 2; do
        check '[ "${rcs[$r]}" != hang ] && [ "${rcs[$r]}" -ne 0 ]' "rank $r: exit ${rcs[$r]} (want non-zero, no hang)"
        cat "$tmp/err$r"
    done
    check '[ $elapsed -le $((timeout + 15)) ]' "took ${elapsed}s for a ${timeout}s timeout"
    check 'grep -q "rank 1" "$tmp/err0" "$tmp/err2"' "no message names rank 1"
    # the native transports notice a death at once (shm watches the peers'
    # processes, tcp sees their sockets close): no need to time out
    case $prov in native | sock)
        check '[ $elapsed -lt $timeout ] && grep -q "peer failed" "$tmp/err0" "$tmp/err2"' \
            "$prov: the death of rank 1 was not noticed before the timeout (${elapsed}s)" ;;
    esac
    check '[ ! -e "$tmp/trace" ] && ! ls -d "$tmp"/trace.* 2>/dev/null' "a partial trace was left"
    rm -f /dev/shm/cs"$killed"_* 2>/dev/null # the killed rank's shm region (libfabric shm)
    ;;
mismatch)
    base="--coll allreduce --iters 2 --warmup 1 $tpa --timeout 20"
    args_size() { [ "$1" = 1 ] && echo "$base --algo ring --size 2M" || echo "$base --algo ring --size 1M"; }
    args_algo() { [ "$1" = 1 ] && echo "$base --algo rhd --size 1M" || echo "$base --algo ring --size 1M"; }
    for fn in args_size args_algo; do
        start 3 $fn
        wait_all 30
        for r in 0 1 2; do
            check '[ "${rcs[$r]}" != hang ] && [ "${rcs[$r]}" -ne 0 ]' "$fn rank $r: exit ${rcs[$r]}"
        done
        cat "$tmp/err0"
        check 'grep -q "rank 1 .*different arguments" "$tmp/err0"' "$fn: rank 0 does not name rank 1"
        check '[ $elapsed -le 15 ]' "$fn: took ${elapsed}s"
    done
    ;;
split)
    # messages above --max-msg are split into parts by the transport (native:
    # eager limit and piece size; both large-message modes, and nothing may be
    # left in /dev/shm naming a rank)
    args_split() { echo "--coll allreduce --algo ring --size 4,1000,200004 --check --iters 2 --warmup 1 $tpa --max-msg 1000 --format csv"; }
    for copy in $([ "$prov" = native ] && echo cma bounce || echo auto); do
        CS_SHM_COPY=$copy start 3 args_split
        wait_all 60
        for r in 0 1 2; do
            check '[ "${rcs[$r]}" = 0 ]' "split $copy rank $r: exit ${rcs[$r]}"
        done
        cat "$tmp/out0" "$tmp/err0"
        check '[ "$(grep -c "^\"ring\",allreduce,.*,3,\"\",\"\",\"\(ofi/[^\"]*\|shm\|tcp\)\",\"[^\"]*\",0$" "$tmp/out0")" = 3 ]' "split $copy: want 3 rows with 0 wrong"
        [ "$prov" != native ] || check '! ls /dev/shm | grep -qE "(^|[^0-9])(${pids[0]}|${pids[1]}|${pids[2]})([^0-9]|$)"' \
            "split $copy: /dev/shm has entries naming the ranks' pids"
    done
    ;;
nolib)
    case $prov in native | sock) echo "SKIP: $prov does not use libfabric"; exit 77 ;; esac
    if command -v readelf >/dev/null; then
        check '! readelf -d "${RUN[0]}" | grep -q "NEEDED.*libfabric"' \
            "collstep links libfabric: it must load it when --transport ofi opens"
    fi
    args_nolib() { echo "--coll allreduce --algo ring --size 1M --iters 2 $tpa"; }
    for lib in /nonexistent/libfabric.so.1 libc.so.6; do
        CS_LIBFABRIC=$lib start 2 args_nolib
        wait_all 30
        for r in 0 1; do
            check '[ "${rcs[$r]}" != hang ] && [ "${rcs[$r]}" != 0 ]' "nolib $lib rank $r: exit ${rcs[$r]}"
            check 'grep -q "rank $r: ofi transport: cannot use libfabric: $lib" "$tmp/err$r"' \
                "nolib $lib rank $r: no message naming $lib: $(cat "$tmp/err$r")"
        done
        check '[ ! -s "$tmp/out0" ]' "nolib $lib: rank 0 printed results"
    done
    ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
