#!/usr/bin/env bash
# netns_cluster.sh - a small emulated cluster: two network namespaces ("hosts")
# joined by a veth pair (10.77.0.1 <-> 10.77.0.2, netem 100us / 10gbit when
# the kernel has it), NP ranks (half per namespace) of
#   collstep run --provider 'tcp;ofi_rxm' --iface <its address>   (TRANSPORT ofi)
#   collstep run --transport tcp --iface <its address>            (TRANSPORT tcp)
# with the env bootstrap across them (MASTER_ADDR = 10.77.0.1):
#   1. allreduce ring and rhd, --check, sizes odd / mid: 0 wrong;
#   2. --trace: the ranks of different namespaces are different hosts
#      (told apart by network namespace), the network tier carries exactly
#      the schedule's cross-host bytes and the host tier the rest.
# Exits 77 when not root, without `ip`, or when namespaces or veth pairs
# cannot be created; the namespaces are removed on every exit.
#   netns_cluster.sh COLLSTEP [NP] [TRANSPORT]
set -u
cs=$1 np=${2:-4} transport=${3:-ofi}
case $transport in
ofi) tp=(--provider "tcp;ofi_rxm") label="ofi/tcp;ofi_rxm" ;;
tcp) tp=(--transport tcp) label=tcp ;;
*) echo "unknown transport '$transport' (ofi or tcp)"; exit 2 ;;
esac
here=$(dirname "$0")
skip() { echo "SKIP: $*"; exit 77; }
[ -x "$cs" ] || skip "collstep not built ('$cs')"
[ "$(id -u)" = 0 ] || skip "not root"
command -v ip >/dev/null || skip "no ip command"
command -v python3 >/dev/null || skip "no python3"
[ "$transport" = ofi ] && command -v fi_info >/dev/null && ! fi_info -p "tcp;ofi_rxm" >/dev/null 2>&1 &&
    skip "no tcp;ofi_rxm provider"

tag=$$
nsa=cs_nsa_$tag nsb=cs_nsb_$tag va=csva$tag vb=csvb$tag
tmp=$(mktemp -d)
pids=()
cleanup() {
    kill -9 "${pids[@]}" 2>/dev/null
    ip netns del "$nsa" 2>/dev/null
    ip netns del "$nsb" 2>/dev/null
    ip link del "$va" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$nsa" 2>/dev/null && ip netns add "$nsb" 2>/dev/null || skip "cannot create network namespaces"
ip link add "$va" type veth peer name "$vb" 2>/dev/null || skip "cannot create a veth pair"
ip link set "$va" netns "$nsa" && ip link set "$vb" netns "$nsb" &&
    ip -n "$nsa" addr add 10.77.0.1/24 dev "$va" && ip -n "$nsb" addr add 10.77.0.2/24 dev "$vb" &&
    ip -n "$nsa" link set "$va" up && ip -n "$nsb" link set "$vb" up &&
    ip -n "$nsa" link set lo up && ip -n "$nsb" link set lo up || skip "cannot configure the veth pair"
if ip netns exec "$nsa" tc qdisc add dev "$va" root netem delay 100us rate 10gbit 2>/dev/null &&
    ip netns exec "$nsb" tc qdisc add dev "$vb" root netem delay 100us rate 10gbit 2>/dev/null; then
    echo "link: veth, netem 100us 10gbit"
else
    echo "link: veth (no netem here)"
fi
# reachable: a connection to a closed port is refused (not timed out)
ip netns exec "$nsb" python3 -c '
import socket, sys
s = socket.socket(); s.settimeout(3)
try:
    s.connect(("10.77.0.1", 9))
except ConnectionRefusedError:
    sys.exit(0)
except OSError:
    sys.exit(1)
' || skip "the namespaces cannot reach each other"

pass=0 failn=0
check() { if eval "$1"; then pass=$((pass + 1)); else echo "FAIL: $2"; failn=$((failn + 1)); fi; }
half=$((np / 2))
nsof() { [ "$1" -lt "$half" ] && echo "$nsa" || echo "$nsb"; }
addrof() { [ "$1" -lt "$half" ] && echo 10.77.0.1 || echo 10.77.0.2; }

# run_ranks ARGS...: NP ranks across the namespaces; rcs[r], out$r, err$r
run_ranks() {
    local r port=$((20000 + tag % 20000))
    pids=()
    for ((r = 0; r < np; r++)); do
        ip netns exec "$(nsof $r)" env -u PMIX_RANK -u PMIX_NAMESPACE CS_LOG=info RANK=$r \
            WORLD_SIZE=$np MASTER_ADDR=10.77.0.1 MASTER_PORT=$port timeout 120 \
            "$cs" run "${tp[@]}" --iface "$(addrof $r)" --timeout 30 "$@" \
            >"$tmp/out$r" 2>"$tmp/err$r" </dev/null &
        pids+=($!)
    done
    rcs=()
    for r in "${!pids[@]}"; do wait "${pids[$r]}"; rcs[$r]=$?; done
    pids=()
    ok=$(printf '0 %.0s' $(seq "$np"))
}

for algo in ring rhd; do
    sizes="$((4 * (1237 * np + 3))),$((4 * (65539 * np + 1)))"
    run_ranks --coll allreduce --algo $algo --size "$sizes" --check --iters 2 --warmup 1 --format csv
    cat "$tmp/out0"
    check '[ "${rcs[*]} " = "$ok" ]' "$algo: exit codes ${rcs[*]}"
    [ "${rcs[0]}" = 0 ] || tail -5 "$tmp"/err*
    check '[ "$(grep -c "^\"$algo\",allreduce,.*,$np,\"\",\"\",\"$label\",\"[^\"]*\",0$" "$tmp/out0")" = 2 ]' \
        "$algo: want 2 rows with 0 wrong"
done

"$cs" gen allreduce ring --ranks "$np" -o "$tmp/ring.cs" || { echo "FAIL: gen"; exit 1; }
chunks=$(awk '$1 == "collective" { for (i = 1; i < NF; i++) if ($i == "chunks") print $(i + 1) }' "$tmp/ring.cs")
hosts=$(for ((r = 0; r < np; r++)); do printf '%s%s' "$([ $r -gt 0 ] && echo ,)" "$(nsof $r)"; done)
run_ranks --coll allreduce --algo ring --size $((4 * chunks * 25000)) --check --iters 3 --warmup 1 \
    --format csv --trace "$tmp/tr" --trace-no-plot --trace-ranks 0
check '[ "${rcs[*]} " = "$ok" ]' "trace run: exit codes ${rcs[*]}"
grep -h "clock offset" "$tmp"/err* | sed 's/.*exec //'
python3 "$here/../exec/trace_check.py" "$tmp/ring.cs" "$tmp/tr" 100000 "$hosts"
check '[ $? = 0 ]' "trace: tiers do not match the schedule's traffic"
check 'grep -q "\"platform\":\"[^\"]*#1 x$half, [^\"]*#2 x$((np - half))\"" "$tmp/tr/summary.json"' \
    "trace: not two hosts of $half ranks"
"$cs" trace "$tmp/tr" | head -4

echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
