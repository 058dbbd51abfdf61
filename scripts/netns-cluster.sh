#!/usr/bin/env bash
# netns-cluster.sh - an emulated multi-host cluster on one machine, for
# collstep calibrate / validate / run (docs/validation.md).
#
#   scripts/netns-cluster.sh [options] -- COMMAND [ARGS...]
#
# Builds H "hosts" (network namespaces) of R ranks each, joined through a
# switch namespace that holds a Linux bridge:
#
#     host 0 (10.88.0.1)      host 1 (10.88.0.2)   ...   host H-1
#      ranks 0..R-1            ranks R..2R-1
#         eth0                    eth0
#          | shaper up (host egress)
#          | shaper down (switch egress toward the host)
#      +---+-----------------------+--------- bridge br0 (switch namespace)
#
# Each host link is shaped in both directions (--rate for every host,
# --host-rate I=RATE for one host: a slower host) by an htb class of that
# rate (bucket --burst) with two leaves: TCP segments without payload
# (acknowledgements) and packets marked DSCP EF (collstep's control
# connections: the script sets CS_TCP_CONTROL_TOS=0xb8 for the ranks)
# first, everything else in a FIFO of --queue bytes (--prio).  The
# machine's kernel has tbf and htb but no netem, so there is no added
# delay: the delay is what the stack gives (veth + bridge + TCP), and the
# script measures and prints it (a TCP ping-pong of 1 byte between host 0
# and host 1 in python, the 10th percentile of 2000 one-way times, the
# smallest of three runs: a busy machine delays the median, not what the
# stack gives).
# The queue holds --queue bytes (default 4 MB): with a shaper's usual small
# limit TCP loses packets at the shaper and reaches about 60 % of the rate;
# with a queue of megabytes it reaches 95-100 %.
# Why acknowledgements and control messages go first (--prio control, the
# default): such a queue is 335 ms of data at 100 mbit/s, and where a host
# sends and receives at once (the exchanges of recursive halving-doubling
# and trees) whatever small travels against one direction's data waits
# behind it: the other direction's acknowledgements (TCP's round trip
# grows to a quarter of a second, its window by one segment per round
# trip, and a long exchange through a slow host moved 80-95 % of its link,
# by an amount that depends on the losses its connections met earlier)
# and the receivers' clear-to-send messages (each handshake up to 335 ms
# late).  A cluster's switches hold microseconds of data, not a third of a
# second: there nothing small waits that long.  Only packets that cannot
# overtake data of their own connection go first (segments without
# payload; a control connection carries only small messages): sorting
# every small packet first (a data connection's short tails and
# ready-to-send frames too) reordered TCP streams.  --prio acks puts only
# the acknowledgements first, --prio none keeps one FIFO (as tbf does),
# both for studying these effects (docs/validation.md has the figures).
# TCP congestion control (--cc): every host namespace gets its own
# (net.ipv4.tcp_congestion_control), by default cubic, Linux's default,
# where the machine allows it (tcp_allowed_congestion_control), else reno,
# its loss-based ancestor.  BBR (v1), which some machines set as their
# default, is not used unless asked for: its window is twice the bandwidth
# times the smallest round trip it saw, here the microseconds of an empty
# veth, so when the other direction's data delays its acknowledgements by
# milliseconds in the shapers it is held by its window, erratically
# (collectives on 4 x 2 hosts: spreads of 5-70 %, every link 10-30 %
# below its rate; under reno: spreads of 0-9 %).
#
# COMMAND runs once per rank, in its host's namespace, started together,
# with RANK, WORLD_SIZE, MASTER_ADDR (host 0), MASTER_PORT, LOCAL_RANK,
# CS_NETNS_HOST (host index), CS_NETNS_ADDR (its host's address),
# CS_NETNS_SWITCH (the switch namespace) and, with --prio control,
# CS_TCP_CONTROL_TOS=0xb8 in the environment (without it the variable is
# removed); in its arguments @ADDR@
# becomes the host's address and @HOST@ the host index (collstep's --iface
# @ADDR@).  Ranks are placed host by host: rank r on host r / R.  Rank 0's standard output is the script's;
# every rank's standard error is prefixed with "[rank N] "; with
# CS_NETNS_ALL_OUT=1 the other ranks' standard output follows at the end,
# prefixed with "[rank N out] ".
#
# Exit status: the first failing rank's (rank 0 first), or 0; 77 when the
# cluster cannot be built here (not root, no `ip`/`tc`, no namespaces);
# 2 for bad options; 130 / 143 / 129 after SIGINT (Ctrl-C) / SIGTERM /
# SIGHUP.  Everything (namespaces, veths, the ranks, the temporary
# directory) is removed on every exit, a failure or a signal included.
#
# Options:
#   -H N              hosts (default 2)
#   -R N              ranks per host (default 2)
#   --rate RATE       rate of every host link, each direction (default
#                     200mbit; tc units: bit (or none), kbit, mbit, gbit,
#                     tbit, their IEC kibit ..., and bps, kbps, mbps, gbps
#                     for bytes per second; 80kbit to 100gbit)
#   --host-rate I=RATE  the rate of host I's link (repeatable)
#   --burst SIZE      the shaper's bucket: bytes sent at line rate after an
#                     idle spell (default 64kb; tc sizes: b, k/kb, m/mb, g/gb,
#                     kbit, mbit, gbit; 1514 bytes, a full frame, to 1gb)
#   --queue SIZE      the data queue of each direction (default 4mb; 1514
#                     bytes to 1gb)
#   --prio control|acks|none  what goes ahead of the data queue: segments
#                     without payload and DSCP EF packets (control, the
#                     default), segments without payload only (acks),
#                     nothing (none)
#   --cc NAME         TCP congestion control in the hosts (default: cubic
#                     where allowed, else reno; 'system': the machine's own)
#   --port P          MASTER_PORT (default 29000 + pid % 20000)
#   --timeout S       kill the ranks after S seconds (default 3600)
#   --nice N          run the ranks at this nice level (default 0; -10 gives
#                     them about 9 times the CPU share of other work at 0, so
#                     builds running beside them delay them less)
#   --keep-going      do not kill the other ranks when one fails
#   --quiet           do not print the cluster description
#
# The 2-core development machine: the rates must keep the network, not the
# CPUs, the bound: at 200 mbit/s per host (25 MB/s) 4 hosts move at most
# 100 MB/s through the bridge, a few percent of a core's copy rate, and the
# ranks (8 on 2 cores) spend most of their time waiting for the shaper.
set -u
# bits RATE, size_ok SIZE: tc's units (shared with tests/bench/bench_validate.sh)
. "$(dirname "${BASH_SOURCE[0]}")/tc-units.sh"
nice=0 H=2 R=2 rate=200mbit burst=64kb queue=4mb prio=control cc= port=$((29000 + $$ % 20000)) tmo=3600 quiet=0 keep=0
declare -A hrate=()
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "netns-cluster: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    -H|-R|--rate|--host-rate|--burst|--queue|--prio|--cc|--port|--timeout|--nice)
        [ $# -ge 2 ] && [ "$2" != -- ] || die "$1: expects a value (see --help)" ;;&
    -H) H=$2; shift 2 ;;
    -R) R=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --host-rate) [[ $2 =~ ^[0-9]+=.+$ ]] || die "--host-rate: expected I=RATE (a host index, a rate), found '$2'"
        hrate[$((10#${2%%=*}))]=${2#*=}; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    --prio) prio=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --timeout) tmo=$2; shift 2 ;;
    --keep-going) keep=1; shift ;;
    --nice) nice=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
[ $# -gt 0 ] || die "no command given (see --help)"
[[ $H =~ ^[0-9]+$ && $H -ge 1 && $H -le 200 ]] || die "-H: expected 1..200 hosts, found '$H'"
[[ $R =~ ^[0-9]+$ && $R -ge 1 && $R -le 64 ]] || die "-R: expected 1..64 ranks per host, found '$R'"
[[ $nice =~ ^-?[0-9]+$ && $nice -ge -20 && $nice -le 19 ]] || die "--nice: expected -20..19, found '$nice'"
for i in "${!hrate[@]}"; do
    [[ $i =~ ^[0-9]+$ && $i -lt $H ]] || die "--host-rate: no host '$i' (hosts 0..$((H - 1)))"
done
[[ $prio == control || $prio == acks || $prio == none ]] || die "--prio: expected control, acks or none, found '$prio'"
bits "$rate" >/dev/null || die "--rate: expected a tc rate from 80kbit to 100gbit (200mbit, 1gbit, 25mbps), found '$rate'"
for i in "${!hrate[@]}"; do
    bits "${hrate[$i]}" >/dev/null ||
        die "--host-rate: expected a tc rate from 80kbit to 100gbit for host $i, found '${hrate[$i]}'"
done
size_ok "$burst" || die "--burst: expected a tc size from 1514 bytes to 1gb (64kb, 1mb, 65536), found '$burst'"
size_ok "$queue" || die "--queue: expected a tc size from 1514 bytes to 1gb (4mb, 512kb, 131072), found '$queue'"
skip() { echo "netns-cluster: SKIP: $*" >&2; exit 77; }
allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control 2>/dev/null)
if [ -z "$cc" ]; then
    cc=reno
    [[ " $allowed " == *" cubic "* ]] && cc=cubic
elif [ "$cc" != system ] && [[ " $allowed " != *" $cc "* ]]; then
    die "--cc: '$cc' is not allowed here (net.ipv4.tcp_allowed_congestion_control: $allowed)"
fi
[ "$(id -u)" = 0 ] || skip "not root (network namespaces need CAP_NET_ADMIN)"
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v tc >/dev/null || skip "no tc command (iproute2)"

tag=cs$$
sw=${tag}sw
tmp=$(mktemp -d /tmp/netns-cluster.XXXXXX)
pids=()
nslist=()
cleanup() {
    local n p
    # every process still inside one of our namespaces (the ranks and what
    # they started), TERM then KILL
    for n in "${nslist[@]}"; do
        for p in $(ip netns pids "$n" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
    done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        p=""
        for n in "${nslist[@]}"; do p+=$(ip netns pids "$n" 2>/dev/null); done
        [ -z "$p" ] && break
        sleep 0.1
    done
    for n in "${nslist[@]}"; do
        for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    done
    wait 2>/dev/null
    for n in "${nslist[@]}"; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# a signal: say so (the ranks' own words may be lost with their output
# pipes, which the same Ctrl-C stops), then cleanup removes everything
stop() { echo "netns-cluster: $1: stopping the ranks and removing the cluster" >&2; exit "$2"; }
trap 'stop interrupted 130' INT
trap 'stop terminated 143' TERM
trap 'stop "hung up" 129' HUP

addr() { echo "10.88.$(($1 / 250)).$(($1 % 250 + 1))"; }
# shape NAMESPACE DEVICE RATE: the device's egress at RATE (htb class 1:1,
# bucket --burst) with two leaves: 1:10 for --prio's packets, prio 0, a
# twentieth of the rate guaranteed, its queue the device's txqueuelen
# packets; 1:20 everything else, a FIFO of --queue bytes.  Both may use the
# whole rate; together they never exceed it.  u32 filters pick 1:10's
# packets: a TCP segment without payload is an IPv4 header of 5 words whose
# total length is 20 + 4 x the TCP data offset (byte 32: its high nibble),
# one filter per offset 5..15; with --prio control also DSCP EF (the TOS
# byte 0xb8, its two ECN bits masked off).
shape() {
    local ns=$1 dev=$2 b a d
    b=$(bits "$3") || return 1
    a=$((b / 20))
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 20 r2q 1000 &&
        ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:1 htb rate "${b}bit" \
            burst "$burst" cburst "$burst" &&
        ip netns exec "$ns" tc class add dev "$dev" parent 1:1 classid 1:10 htb rate "${a}bit" \
            ceil "${b}bit" burst "$burst" cburst "$burst" prio 0 quantum 1514 &&
        ip netns exec "$ns" tc class add dev "$dev" parent 1:1 classid 1:20 htb rate "$((b - a))bit" \
            ceil "${b}bit" burst "$burst" cburst "$burst" prio 1 quantum 1514 &&
        ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:20 handle 20: bfifo limit "$queue" ||
        return 1
    [ "$prio" = none ] && return 0
    for ((d = 5; d <= 15; d++)); do
        ip netns exec "$ns" tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
            match ip protocol 6 0xff match u8 0x05 0x0f at 0 match u16 $((20 + 4 * d)) 0xffff at 2 \
            match u8 $((d << 4)) 0xf0 at 32 flowid 1:10 || return 2
    done
    [ "$prio" = acks ] && return 0
    ip netns exec "$ns" tc filter add dev "$dev" parent 1: protocol ip prio 2 u32 \
        match ip dsfield 0xb8 0xfc flowid 1:10 || return 2
}
ip netns add "$sw" 2>/dev/null || skip "cannot create network namespaces"
nslist+=("$sw")
ip -n "$sw" link set lo up
ip -n "$sw" link add br0 type bridge || skip "cannot create a bridge"
ip -n "$sw" link set br0 up
for ((h = 0; h < H; h++)); do
    ns=${tag}h$h
    ip netns add "$ns" || skip "cannot create network namespace $ns"
    nslist+=("$ns")
    ip link add eth0 netns "$ns" type veth peer name p$h netns "$sw" 2>/dev/null ||
        skip "cannot create a veth pair"
    r=${hrate[$h]:-$rate}
    ip -n "$ns" link set lo up &&
        ip -n "$ns" addr add "$(addr $h)/16" dev eth0 &&
        ip -n "$ns" link set eth0 up &&
        ip -n "$sw" link set p$h master br0 &&
        ip -n "$sw" link set p$h up || skip "cannot configure host $h's link"
    if [ "$cc" != system ]; then
        # /proc/sys/net is the namespace's own (no sysctl: procps is not installed everywhere)
        ip netns exec "$ns" sh -c "echo '$cc' >/proc/sys/net/ipv4/tcp_congestion_control" 2>/dev/null ||
            skip "cannot set TCP congestion control $cc in host $h"
    fi
    # both directions: host egress (up) and the switch port's egress (down)
    shape "$ns" eth0 "$r" && shape "$sw" p$h "$r"
    case $? in
    0) ;;
    2) skip "cannot add the u32 filters of --prio $prio on host $h's link (the kernel's cls_u32 classifier; --prio none needs none)" ;;
    *) skip "cannot shape host $h's link with htb (rate $r burst $burst queue $queue; the kernel's sch_htb and sch_fifo)" ;;
    esac
done

# the delay the stack gives: 1-byte TCP ping-pong host 0 <-> host 1 (or
# host 0's loopback with one host), 10th percentile of 2000 round trips / 2
pingpong() {
    local dst=$1 cmdns=$2
    ip netns exec "${tag}h0" python3 - "$(addr 0)" <<'EOF' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 28999)); s.listen(1); s.settimeout(10)
c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    b = c.recv(1)
    if not b: break
    c.sendall(b)
EOF
    local srv=$!
    ip netns exec "$cmdns" python3 - "$(addr 0)" <<'EOF'
import socket, sys, time
for _ in range(100):
    try:
        s = socket.create_connection((sys.argv[1], 28999), timeout=5); break
    except OSError:
        time.sleep(0.05)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
t = []
for i in range(2200):
    a = time.perf_counter_ns(); s.sendall(b'x'); s.recv(1); t.append(time.perf_counter_ns() - a)
t = sorted(t[200:])
print("%.1f" % (t[len(t) // 10] / 2000.0))
EOF
    wait $srv 2>/dev/null
}
delay=""
if command -v python3 >/dev/null; then
    # three measurements, the smallest (a busy machine delays some)
    for _ in 1 2 3; do
        d=$(pingpong 0 "${tag}h$((H > 1 ? 1 : 0))" 2>/dev/null)
        [ -n "$d" ] && { [ -z "$delay" ] || python3 -c "import sys; sys.exit(0 if $d < $delay else 1)"; } && delay=$d
    done
fi
if [ $quiet = 0 ]; then
    {
        echo "netns-cluster: $H hosts x $R ranks, bridge in namespace $sw, addresses $(addr 0) .. $(addr $((H - 1)))"
        for ((h = 0; h < H; h++)); do
            echo "netns-cluster:   host $h: namespace ${tag}h$h, $(addr $h), ranks $((h * R))..$((h * R + R - 1)), rate ${hrate[$h]:-$rate} burst $burst queue $queue each direction"
        done
        case $prio in
        control) what="TCP segments without payload and DSCP EF packets (collstep's control connections) ahead of data" ;;
        acks) what="TCP segments without payload (acknowledgements) ahead of data" ;;
        none) what="one FIFO for every packet" ;;
        esac
        echo "netns-cluster: shaper: htb, $what (--prio $prio)"
        echo "netns-cluster: TCP congestion control: $([ "$cc" = system ] && echo "the machine's ($(cat /proc/sys/net/ipv4/tcp_congestion_control))" || echo "$cc")"
        echo "netns-cluster: no netem: delay is the stack's; measured TCP one-way (1 B ping-pong, 10th percentile): ${delay:-not measured (no python3)} us"
    } >&2
fi
[ -n "$delay" ] && echo "$delay" >"$tmp/delay" && [ -n "${CS_NETNS_DELAY_FILE:-}" ] && cp "$tmp/delay" "$CS_NETNS_DELAY_FILE"

N=$((H * R))
# with --prio control the ranks mark their control connections (a value the
# caller exported is replaced); otherwise nothing is marked, whatever the
# caller's environment says, so that --prio acks and none measure that
tos=(-u CS_TCP_CONTROL_TOS)
[ "$prio" = control ] && tos+=(CS_TCP_CONTROL_TOS=0xb8)
exec 3>&1
for ((r = 0; r < N; r++)); do
    h=$((r / R))
    args=()
    for a in "$@"; do a=${a//@ADDR@/$(addr $h)}; args+=("${a//@HOST@/$h}"); done
    (
        set -o pipefail
        if [ $r = 0 ]; then exec 4>&3; else exec 4>"$tmp/out$r"; fi
        nice -n "$nice" ip netns exec "${tag}h$h" env -u PMIX_RANK -u PMIX_NAMESPACE "${tos[@]}" RANK=$r WORLD_SIZE=$N \
            LOCAL_RANK=$((r % R)) MASTER_ADDR="$(addr 0)" MASTER_PORT=$port CS_NETNS_HOST=$h \
            CS_NETNS_ADDR="$(addr $h)" CS_NETNS_SWITCH="$sw" timeout "$tmo" "${args[@]}" 2>&1 >&4 </dev/null 4>&- |
            sed -u "s/^/[rank $r] /" >&2
    ) &
    pids+=($!)
done
rc=0
left=$N
declare -A done_rc=()
# wait for the ranks; the first failure (unless --keep-going) stops the others
while [ $left -gt 0 ]; do
    wait -n -p who "${pids[@]}" 2>/dev/null
    st=$?
    [ -z "${who:-}" ] && break
    for r in "${!pids[@]}"; do
        if [ "${pids[$r]}" = "$who" ]; then done_rc[$r]=$st; fi
    done
    left=$((left - 1))
    if [ $st != 0 ] && [ $keep = 0 ] && [ $rc = 0 ]; then
        rc=$st
        # let the others notice and say why themselves, then stop them
        for _ in $(seq 50); do [ -z "$(jobs -rp)" ] && break; sleep 0.1; done
        for n in "${nslist[@]}"; do
            for p in $(ip netns pids "$n" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
        done
    fi
done
wait
[ -n "${done_rc[0]:-}" ] && [ "${done_rc[0]}" != 0 ] && rc=${done_rc[0]}
for ((r = 1; r < N; r++)); do [ -s "$tmp/out$r" ] && [ "${CS_NETNS_ALL_OUT:-0}" = 1 ] && sed "s/^/[rank $r out] /" "$tmp/out$r"; done
exit $rc
