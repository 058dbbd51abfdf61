#!/usr/bin/env bash
# calib_netns.sh - collstep calibrate and validate on the emulated cluster of
# scripts/netns-cluster.sh (network namespaces, htb-shaped host links).
#   calib_netns.sh COLLSTEP CASE [TCP_PINGPONG]
# CASE:
#   rate     2 hosts x 2 ranks at 400 mbit/s: the calibrated NIC bandwidth is
#            within 10 % of the shaped rate, the inter-node delay (its 1-byte
#            one-way time less the transport's own cost: its 1-byte time
#            inside a node less a loopback reference) within 20 % of the
#            delay tcp_pingpong.c measures (plain sockets in C; 10th
#            percentiles everywhere), the platform loads in
#            `collstep sim` and `collstep platform show`; validate prints
#            every column (table, csv and json)
#   slow     3 hosts x 2 ranks, host 2 at half the rate: its NIC is tier
#            nic-slow at about half the others' bandwidth
#   trace    validate --trace: live and simulated traces side by side, bytes
#            per tier equal, a foreign directory refused (2); validate --algo
#            auto --tuning FILE: per size the table's algorithm
#   shaper   the cluster script itself: a DSCP EF ping-pong during a 2-way
#            exchange goes ahead of the data with --prio control (the
#            default) and waits behind it with --prio none (prio_probe.py);
#            acknowledgements go through the shapers' first class (host
#            and switch side) with control and acks, nothing with none;
#            collstep marks its control connections only with control;
#            the shaped rate holds in every mode; a bad
#            CS_TCP_CONTROL_TOS exits 3 on every rank; bad options exit 2
#            before anything is built
#   errors   calibrate with one rank (2), validate with a platform of fewer
#            hosts than ranks (2), an unknown algorithm (2), a rank killed
#            mid-calibration (3, naming it), Ctrl-C to the whole cluster
#            mid-calibration (130, said): no namespace, no output file, no
#            temporary left behind
# Exits 77 without root, namespaces, tc or python3 (through the cluster
# script's own 77).
set -u
cs=$1 case=$2 pingpong=${3:-$(dirname "$1")/../tests/netns/tcp_pingpong}
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/../../scripts/netns-cluster.sh
skip() { echo "SKIP: $*"; exit 77; }
[ -x "$cs" ] || skip "collstep not built ('$cs')"
[ "$(id -u)" = 0 ] || skip "not root"
command -v python3 >/dev/null || skip "no python3"
"$cs" calibrate --help >/dev/null 2>&1 || skip "collstep built without calibrate (exec/ + platforms/)"
tmp=$(mktemp -d /tmp/calib_netns.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 failn=0
check() { if eval "$1"; then pass=$((pass + 1)); else echo "FAIL: $2"; failn=$((failn + 1)); fi; }
# cluster H R [cluster options] -- collstep args: one run, $tmp/out, $tmp/err, $rc
cluster() {
    local H=$1 R=$2
    shift 2
    CS_NETNS_DELAY_FILE=$tmp/delay CS_SNAP=$tmp/snap CS_SS=$tmp/ss "$cluster" -H "$H" -R "$R" "$@" \
        >"$tmp/out" 2>"$tmp/err" &
    cpid=$!
    wait $cpid
    rc=$?
    [ $rc = 77 ] && { cat "$tmp/err"; skip "the emulated cluster cannot be built here"; }
}
calib=(calibrate --transport tcp --iface @ADDR@ --size 1:4M --budget 0.1 --timeout 30)
py() { python3 -c "$@"; }

case $case in
rate)
    cluster 2 2 --rate 400mbit -- "$cs" "${calib[@]}" -o "$tmp/p.xml"
    cat "$tmp/out"
    check '[ $rc = 0 ]' "calibrate exit $rc: $(tail -3 "$tmp/err")"
    check '[ -s "$tmp/p.xml" ] && [ -s "$tmp/p.json" ]' "no platform or json written"
    # the reference: tcp_pingpong.c (plain sockets in C), 10th percentiles,
    # across two hosts (the path's delay) and inside one (loopback); the
    # calibrated times include the transport's own cost per message, which
    # its intra-node 1-byte time minus the loopback reference gives
    delay="" lo=""
    # reference: the best (smallest) of the runs so far, across and inside
    reference() {
        [ -x "$pingpong" ] || return
        local d l
        CS_NETNS_ALL_OUT=1 "$cluster" -H 2 -R 1 --rate 400mbit --quiet -- "$pingpong" \
            >"$tmp/pp" 2>/dev/null
        d=$(sed -n 's/^\[rank 1 out\] \([0-9.]*\) .*/\1/p' "$tmp/pp")
        CS_NETNS_ALL_OUT=1 "$cluster" -H 1 -R 2 --quiet -- "$pingpong" >"$tmp/pp" 2>/dev/null
        l=$(sed -n 's/^\[rank 1 out\] \([0-9.]*\) .*/\1/p' "$tmp/pp")
        [ -n "$d" ] && delay=$(py "print(min($d, ${delay:-$d}))")
        [ -n "$l" ] && lo=$(py "print(min($l, ${lo:-$l}))")
    }
    reference
    # NIC: 400 mbit/s = 50e6 B/s on the wire; within 10 %
    bw=$(py "import json; d=json.load(open('$tmp/p.json')); print(min(n['nic_Bps'] for n in d['nodes']))")
    echo "calibrated NIC bandwidth: $bw B/s (shaped 5e7)"
    check "py 'import sys; sys.exit(0 if abs($bw / 5e7 - 1) <= 0.10 else 1)'" \
        "NIC bandwidth $bw B/s not within 10 % of 5e7"
    # every node's exchange: measured in 1 to 3 trials, its slower direction
    # at least 0.75 of one way with as many ranks (nic_all_Bps; the links
    # are full duplex: a trial that lost a direction to a TCP loss episode,
    # 0.57 to 0.75 of it when seen, is tried again, not kept)
    check 'py "
import json, sys
n = json.load(open(\"$tmp/p.json\"))[\"nodes\"]
print(\"exchange trials:\", [x[\"exchange_trials\"] for x in n], \"slower way / one way:\",
      [round(min(x[\"exchange_out_Bps\"], x[\"exchange_in_Bps\"]) / x[\"nic_all_Bps\"], 3) for x in n])
sys.exit(0 if all(1 <= x[\"exchange_trials\"] <= 3 and
                  min(x[\"exchange_out_Bps\"], x[\"exchange_in_Bps\"]) >= 0.75 * x[\"nic_all_Bps\"] > 0
                  for x in n) else 1)"' \
        "exchange: a node's trials out of 1..3 or its slower direction under 0.75 of one way"
    # the delay calibration recovers: the one-way time of its small messages
    # (1 to 64 B, all latency: the best 10th percentile) across nodes less the transport's own cost (1 byte inside a
    # node less the loopback reference)
    a=$(py "import json; d=json.load(open('$tmp/p.json')); print(min(p['p10_us'] for p in [s for s in d['series'] if s['class'] == 'inter'][0]['points'] if p['bytes'] <= 64))")
    i=$(py "import json; d=json.load(open('$tmp/p.json')); print(min(p['p10_us'] for p in [s for s in d['series'] if s['class'] == 'intra'][0]['points'] if p['bytes'] <= 64))")
    echo "reference delay (tcp_pingpong, 10th percentile): ${delay:-?} us across, ${lo:-?} us loopback"
    echo "calibrated 1-64 B one-way (best 10th percentile): $a us across, $i us inside a node"
    # a busy machine sometimes puts the pair on one core for a whole sweep
    # (13 us instead of 8), and the reference moves by a third from one run
    # to the next: up to four more rounds, each a small calibration sweep and
    # a reference run, comparing the best of each side
    for retry in 1 2 3 4; do
        py "import sys; d = $a - ($i - ${lo:-0}); sys.exit(0 if '$delay' and abs(d / float('$delay') - 1) <= 0.20 else 1)" && break
        cluster 2 2 --rate 400mbit --quiet -- "$cs" calibrate --transport tcp --iface @ADDR@ \
            --size 1:64 --budget 0.1 --timeout 30 -o "$tmp/small.xml" --force
        [ $rc = 0 ] || { echo "small sweep $retry: exit $rc: $(tail -2 "$tmp/err")"; break; }
        a2=$(py "import json; d=json.load(open('$tmp/small.json')); print(min(p['p10_us'] for p in [s for s in d['series'] if s['class'] == 'inter'][0]['points']))")
        i2=$(py "import json; d=json.load(open('$tmp/small.json')); print(min(p['p10_us'] for p in [s for s in d['series'] if s['class'] == 'intra'][0]['points']))")
        echo "small sweep $retry: $a2 us across, $i2 us inside a node"
        [ -n "$a2" ] && [ -n "$i2" ] || continue
        a=$(py "print(min($a, $a2))") i=$(py "print(min($i, $i2))") # best of each
        reference
        echo "reference after round $retry: $delay us across, $lo us loopback"
    done
    check "[ -n '$delay' ] && [ -n '$lo' ] && py 'import sys; d = $a - ($i - $lo); print(\"recovered delay %.2f us\" % d); sys.exit(0 if abs(d / $delay - 1) <= 0.20 else 1)'" \
        "recovered delay ($a - ($i - ${lo:-?})) us not within 20 % of the reference ${delay:-?} us"
    check '"$cs" platform show "$tmp/p.xml" >"$tmp/show" && grep -q "^nic " "$tmp/show" && grep -q "^host " "$tmp/show" && grep -q "dims 2x2" "$tmp/show"' \
        "platform show: no nic / host tier or dims 2x2: $(head -12 "$tmp/show")"
    check '"$cs" sim --platform "$tmp/p.xml" --algo ring,hier --size 1M --format csv >"$tmp/sim" && [ "$(grep -c "^\"*\(ring\|hier\)" "$tmp/sim")" = 2 ]' \
        "sim on the calibrated platform: $(cat "$tmp/sim")"
    # validate: every column, three formats
    val=(validate --transport tcp --iface @ADDR@ --platform "$tmp/p.xml" --algo ring,rhd
         --size 256K,1M --iters 2 --warmup 1 --timeout 30)
    cluster 2 2 --rate 400mbit -- "$cs" "${val[@]}"
    cat "$tmp/out"
    check '[ $rc = 0 ]' "validate exit $rc: $(tail -3 "$tmp/err")"
    for col in algo size count type redop algbw busbw measured spread predicted error; do
        check 'grep -q "^# .*\b$col\b" "$tmp/out"' "validate table: no column '$col'"
    done
    check '[ "$(grep -cE "^  (ring|rhd) +[0-9]+ +[0-9]+ +float +sum( +[-+]?[0-9.]+){6}$" "$tmp/out")" = 4 ]' \
        "validate table: want 4 rows of 11 columns"
    check 'grep -qE "^#  overall +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$tmp/out"' "validate: no overall |error| line"
    cluster 2 2 --rate 400mbit -- "$cs" "${val[@]}" --format json -o "$tmp/v.json"
    check '[ $rc = 0 ] && py "
import json, sys
d = json.load(open(\"$tmp/v.json\"))
keys = [\"algo\", \"coll\", \"size_bytes\", \"ranks\", \"measured_us\", \"predicted_us\", \"error_pct\"]
ok = len(d[\"rows\"]) == 4 and all(all(k in r for k in keys) for r in d[\"rows\"])
ok = ok and all(r[\"measured_us\"] > 0 and r[\"predicted_us\"] > 0 for r in d[\"rows\"])
ok = ok and any(s[\"algo\"] == \"overall\" for s in d[\"summary\"])
sys.exit(0 if ok else 1)"' "validate json: rows or keys missing"
    cluster 2 2 --rate 400mbit -- "$cs" "${val[@]}" --format csv
    check '[ $rc = 0 ] && [ "$(grep -c "^\(ring\|rhd\),.*,allreduce," "$tmp/out")" = 4 ] && head -1 "$tmp/out" | grep -q "measured_us,.*predicted_us,error_pct"' \
        "validate csv: $(head -3 "$tmp/out")"
    ;;
slow)
    cluster 3 2 --rate 400mbit --host-rate 2=200mbit -- "$cs" "${calib[@]}" -o "$tmp/p.xml"
    cat "$tmp/out"
    check '[ $rc = 0 ]' "calibrate exit $rc: $(tail -3 "$tmp/err")"
    check 'py "
import json, sys
d = json.load(open(\"$tmp/p.json\"))
n = d[\"nodes\"]
ok = [x[\"tier\"] for x in n] == [\"nic\", \"nic\", \"nic-slow\"]
r = n[2][\"nic_Bps\"] / min(n[0][\"nic_Bps\"], n[1][\"nic_Bps\"])
print(\"slow / fast NIC:\", round(r, 3), [x[\"tier\"] for x in n])
sys.exit(0 if ok and 0.4 <= r <= 0.6 else 1)"' "the slow host is not a nic-slow tier at about half the rate"
    check '"$cs" platform show "$tmp/p.xml" | grep -q "^nic-slow "' "platform show: no nic-slow tier"
    check 'grep -q "<link id=\"nic-n2\" [^>]*><prop id=\"tier\" value=\"nic-slow\"/>" "$tmp/p.xml"' \
        "nic-n2 is not tagged nic-slow in the XML"
    ;;
shaper)
    cpids=""
    # 1. the effect: a marked ping-pong during a 2-way exchange of 32 MiB at
    #    100 mbit/s (2.8 s at TCP's 11.96 MB/s each way) goes ahead of the
    #    data with --prio control and waits behind it with --prio none
    for prio in control none; do
        cluster 2 1 --rate 100mbit --prio $prio --quiet -- python3 "$here/prio_probe.py" $((32 << 20))
        cpids+=" $cpid"
        cat "$tmp/out"
        check '[ $rc = 0 ]' "--prio $prio: probe exit $rc: $(tail -3 "$tmp/err")"
        secs=$(sed -n 's/^exchange \([0-9.]*\) s;.*/\1/p' "$tmp/out")
        rtt=$(sed -n 's/.* median \([0-9.]*\) ms$/\1/p' "$tmp/out")
        check "[ -n '$secs' ] && py 'import sys; sys.exit(0 if 2.5 <= $secs <= 3.6 else 1)'" \
            "--prio $prio: 32 MiB each way took ${secs:-?} s, want 2.5-3.6 s at 100 mbit/s"
        if [ $prio = control ]; then
            check "[ -n '$rtt' ] && py 'import sys; sys.exit(0 if $rtt < 5 else 1)'" \
                "--prio control: the marked ping-pong took ${rtt:-?} ms during the exchange, want < 5"
        else
            check "[ -n '$rtt' ] && py 'import sys; sys.exit(0 if $rtt >= 10 else 1)'" \
                "--prio none: the ping-pong took ${rtt:-?} ms during the exchange, want >= 10 (behind data)"
        fi
    done
    # 2. what each class carries, on host 0's egress and the switch port
    #    toward host 0, during a 2-rank ring allreduce of 16 MiB over
    #    collstep's tcp (1.4 s at 100 mbit/s), and whether collstep marked
    #    its control connection (ss --tos on rank 0 a second in)
    counts='for c in 1:10 1:20; do
                echo "$1 $c $(tc -s class show dev $2 classid $c | sed -n "s/^ Sent \([0-9]*\) bytes \([0-9]*\) pkt.*/\1 \2/p")"
            done'
    run=(run --transport tcp --iface @ADDR@ --coll allreduce --algo ring --size 16M --iters 2
         --warmup 1 --timeout 60 --format csv)
    for prio in control acks none; do
        rm -f "$tmp/ss"
        # the caller's CS_TCP_CONTROL_TOS never reaches the ranks of acks and none
        CS_TCP_CONTROL_TOS=0xb8 cluster 2 1 --rate 100mbit --prio $prio -- bash -c '
            snap() { [ "$RANK" = 0 ] || return 0
                     bash -c "$2" _ host eth0 | sed "s/^/$1 /"
                     ip netns exec "$CS_NETNS_SWITCH" bash -c "$2" _ switch p0 | sed "s/^/$1 /"; }
            counts=$1; shift
            snap before "$counts" >>"$CS_SNAP"
            [ "$RANK" = 0 ] && { sleep 1; ss -tn --tos >"$CS_SS"; } &
            "$@" || exit
            wait
            snap after "$counts" >>"$CS_SNAP"' _ "$counts" "$cs" "${run[@]}"
        cpids+=" $cpid"
        check '[ $rc = 0 ]' "--prio $prio: exit $rc: $(tail -3 "$tmp/err")"
        check 'grep -q "shaper: htb, .* (--prio $prio)" "$tmp/err"' "--prio $prio: no shaper line: $(head -8 "$tmp/err")"
        # packets and bytes each class sent during the run: "DEV CLASS BYTES PKTS"
        d=$(py "
rows = [l.split() for l in open('$tmp/snap')]
b = {(r[1], r[2]): (int(r[3]), int(r[4])) for r in rows if r[0] == 'before'}
for r in rows:
    if r[0] == 'after':
        k = (r[1], r[2]); print(r[1], r[2], int(r[3]) - b[k][0], int(r[4]) - b[k][1])")
        rm -f "$tmp/snap"
        echo "--prio $prio: sent during the run (device class bytes packets):" $d
        ack_h=$(echo "$d" | awk '$1 == "host" && $2 == "1:10" { print $4 }')
        ack_s=$(echo "$d" | awk '$1 == "switch" && $2 == "1:10" { print $4 }')
        per=$(echo "$d" | awk '$2 == "1:10" { b += $3; p += $4 } END { print p ? int(b / p) : 0 }')
        dat=$(echo "$d" | awk '$1 == "host" && $2 == "1:20" { print $4 }')
        check '[ -s "$tmp/ss" ]' "--prio $prio: rank 0 wrote no ss -tn --tos listing"
        marked=$(grep -c "tos:0xb8" "$tmp/ss" 2>/dev/null)
        check '[ "${dat:-0}" -gt 10000 ]' "--prio $prio: the data class sent ${dat:-?} packets, want > 10000"
        case $prio in
        control|acks)
            check '[ "${ack_h:-0}" -gt 100 ] && [ "${ack_s:-0}" -gt 100 ]' \
                "--prio $prio: the first class sent ${ack_h:-?} (host) and ${ack_s:-?} (switch) packets, want > 100 each"
            check '[ "$per" -lt 142 ]' "--prio $prio: the first class's packets average $per bytes, want only small ones (< 142 with the Ethernet header)"
            ;;
        none)
            check '[ "${ack_h:--1}" = 0 ] && [ "${ack_s:--1}" = 0 ]' \
                "--prio none: the first class sent ${ack_h:-?} (host) and ${ack_s:-?} (switch) packets, want 0"
            ;;
        esac
        if [ $prio = control ]; then
            check '[ "${marked:-0}" -ge 1 ]' "--prio control: no connection marked tos:0xb8 (CS_TCP_CONTROL_TOS): $(cat "$tmp/ss")"
        else
            check '[ "${marked:-0}" = 0 ]' "--prio $prio: a connection marked tos:0xb8 without CS_TCP_CONTROL_TOS: $(cat "$tmp/ss")"
        fi
        us=$(py "
import csv, io
rows = list(csv.DictReader(io.StringIO(open('$tmp/out').read())))
print(rows[0]['time_us'] if rows else '')" 2>/dev/null)
        echo "--prio $prio: ring allreduce 16 MiB: ${us:-?} us, $marked marked connection(s)"
        check "[ -n '$us' ] && py 'import sys; sys.exit(0 if 1.2e6 <= $us <= 2.2e6 else 1)'" \
            "--prio $prio: ring allreduce of 16 MiB took ${us:-?} us, want 1.2-2.2 s at 100 mbit/s"
    done
    # 3. a bad traffic class for the control connections: every rank says so,
    #    a usage error (2: malformed input, the shared exit-code list)
    cluster 2 1 --rate 100mbit --quiet -- env CS_TCP_CONTROL_TOS=300 "$cs" "${run[@]}"
    cpids+=" $cpid"
    check '[ $rc = 2 ] && [ "$(grep -c "CS_TCP_CONTROL_TOS: expected a byte" "$tmp/err")" = 2 ]' \
        "CS_TCP_CONTROL_TOS=300: exit $rc (want 2, both ranks naming it): $(tail -4 "$tmp/err")"
    # 4. bad options exit 2 before anything is built
    for bad in "--prio small" "--prio" "--rate 12x" "--rate 10bit" "--rate 200gbit" \
        "--host-rate 1=fast" "--host-rate =1mbit" "--burst 64x" "--queue 0" "--queue 1" \
        "--queue 5gb" "--burst 1kbit"; do
        "$cluster" -H 2 -R 1 $bad -- true >"$tmp/out" 2>"$tmp/err"
        rc=$?
        check '[ $rc = 2 ] && grep -q "^netns-cluster: --" "$tmp/err"' "option '$bad': exit $rc: $(cat "$tmp/err")"
    done
    for p in $cpids; do
        check '[ -z "$(ip netns list | grep -E "^cs${p}(sw|h[0-9]+)( |$)")" ]' "namespaces of cluster $p left: $(ip netns list)"
    done
    ;;
errors)
    ls /dev/shm >"$tmp/shm0" 2>/dev/null
    cluster 1 1 -- "$cs" "${calib[@]}" -o "$tmp/one.xml"
    check '[ $rc = 2 ] && grep -q "one rank" "$tmp/err"' "calibrate on one rank: exit $rc: $(cat "$tmp/err")"
    check '[ ! -e "$tmp/one.xml" ]' "calibrate on one rank wrote a platform"
    # a 2-rank platform, then validate on 4 ranks
    cluster 2 1 -- "$cs" "${calib[@]}" --size 1:64K -o "$tmp/two.xml"
    check '[ $rc = 0 ]' "calibrate on 2 ranks: exit $rc: $(tail -3 "$tmp/err")"
    cluster 2 2 -- "$cs" validate --transport tcp --iface @ADDR@ --platform "$tmp/two.xml" \
        --algo ring --size 1M --iters 1
    check '[ $rc = 2 ] && grep -q "has 2 .* but 4 ranks" "$tmp/err"' \
        "validate, platform of 2 hosts on 4 ranks: exit $rc: $(cat "$tmp/err")"
    cluster 2 1 -- "$cs" validate --transport tcp --iface @ADDR@ --platform "$tmp/two.xml" \
        --algo ring,nosuch --size 1M --iters 1
    check '[ $rc = 2 ] && grep -q "no algorithm .nosuch." "$tmp/err"' \
        "validate, unknown algorithm: exit $rc: $(cat "$tmp/err")"
    # rank 3 killed (SIGKILL) 3 s into a calibration
    cluster 2 2 --rate 100mbit -- bash -c '[ "$RANK" = 3 ] && { sleep 3; kill -9 $$; } & exec "$@"' _ \
        "$cs" "${calib[@]}" -o "$tmp/killed.xml"
    check '[ $rc = 3 ] && grep -q "rank 3" "$tmp/err"' \
        "killed rank: exit $rc (want 3, naming rank 3): $(tail -4 "$tmp/err")"
    check '[ -z "$(ls -A "$tmp" | grep -E "killed|\.tmp\.")" ]' "output left behind: $(ls "$tmp")"
    check '[ -z "$(ip netns list | grep "^cs${cpid}")" ]' "namespaces left: $(ip netns list)"
    # Ctrl-C 4 s into a calibration: SIGINT to the whole process group, as a
    # terminal sends it (python: a background job of this shell ignores it)
    py "
import os, signal, subprocess, sys, time
p = subprocess.Popen(['$cluster', '-H', '2', '-R', '1', '--rate', '100mbit', '--', '$cs'] + sys.argv[1:],
                     stdout=open('$tmp/out', 'w'), stderr=open('$tmp/err', 'w'),
                     start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(4)
os.killpg(p.pid, signal.SIGINT)
t = time.time()
rc = p.wait(timeout=60)
open('$tmp/intr', 'w').write('%d %d %.1f' % (p.pid, rc, time.time() - t))" "${calib[@]}" -o "$tmp/intr.xml"
    read -r ipid rc secs <"$tmp/intr"
    [ $rc = 77 ] && skip "the emulated cluster cannot be built here"
    check '[ $rc = 130 ] && grep -q "netns-cluster: interrupted" "$tmp/err"' \
        "Ctrl-C: exit $rc after $secs s (want 130 and a word): $(tail -3 "$tmp/err")"
    check '[ ! -e "$tmp/intr.xml" ] && [ -z "$(ls -A "$tmp" | grep -E "^intr\.(xml|json)|\.tmp\.")" ]' \
        "Ctrl-C: output left behind: $(ls "$tmp")"
    check '[ -z "$(ip netns list | grep -E "^cs${ipid}(sw|h[0-9]+)( |$)")" ]' "Ctrl-C: namespaces left: $(ip netns list)"
    ls /dev/shm >"$tmp/shm1" 2>/dev/null
    # new segments of collstep (cs<PID>_...) whose process is gone: every rank
    # of these clusters has exited, while other programs on a shared machine
    # may hold segments of their own meanwhile
    left=$(comm -13 "$tmp/shm0" "$tmp/shm1" | grep -i -E "collstep|^cs" | while read -r f; do
        p=${f#cs}; p=${p%%_*}
        [[ $p =~ ^[0-9]+$ ]] && [ -d "/proc/$p" ] || echo "$f"
    done)
    check '[ -z "$left" ]' "/dev/shm: $left"
    ;;
trace)
    # validate --trace: live and simulated traces side by side, bytes per
    # tier (host: ranks of one node, network: of different nodes) equal
    cluster 2 2 --rate 400mbit -- "$cs" "${calib[@]}" --size 1:64K -o "$tmp/p.xml"
    check '[ $rc = 0 ]' "calibrate exit $rc: $(tail -3 "$tmp/err")"
    val=(validate --transport tcp --iface @ADDR@ --platform "$tmp/p.xml" --algo ring,rhd
         --size 256K,1M --iters 2 --warmup 1 --timeout 30)
    cluster 2 2 --rate 400mbit -- "$cs" "${val[@]}" --trace "$tmp/tr"
    cat "$tmp/out"
    check '[ $rc = 0 ]' "validate --trace exit $rc: $(tail -3 "$tmp/err")"
    check '[ -d "$tmp/tr/live/ring" ] && [ -d "$tmp/tr/live/rhd" ] && [ -f "$tmp/tr/sim-1/index.csv" ]' \
        "trace layout: $(ls -R "$tmp/tr" 2>&1 | head -20)"
    check 'py "
import csv, sys
rows = list(csv.DictReader(open(\"$tmp/tr/compare.csv\")))
tiers = set((r[\"algo\"], r[\"size_bytes\"], r[\"tier\"]) for r in rows)
want = set((a, s, t) for a in (\"ring\", \"rhd\") for s in (\"262144\", \"1048576\") for t in (\"host\", \"network\"))
ok = tiers == want and all(r[\"bytes_match\"] == \"1\" and r[\"live_bytes\"] == r[\"sim_bytes\"] and int(r[\"live_bytes\"]) > 0 for r in rows)
ok = ok and all(float(r[\"live_time_us\"]) > 0 and float(r[\"sim_time_us\"]) > 0 for r in rows)
print(len(rows), \"tier rows, bytes equal:\", ok)
sys.exit(0 if ok else 1)"' "compare.csv: $(cat "$tmp/tr/compare.csv")"
    check 'grep -qE "^  ring +1048576 network +[0-9]+ +[0-9]+ +yes " "$tmp/out"' "no printed comparison row"
    check '"$cs" trace "$tmp/tr/sim-1" >/dev/null && "$cs" trace "$tmp/tr/live/ring" >/dev/null' \
        "collstep trace cannot read the traces"
    # a directory collstep did not write is refused before anything runs
    mkdir "$tmp/mine" && echo keep >"$tmp/mine/notes"
    cluster 2 2 --rate 400mbit -- "$cs" "${val[@]}" --trace "$tmp/mine"
    check '[ $rc = 2 ] && grep -q "trace" "$tmp/err" && [ "$(cat "$tmp/mine/notes")" = keep ] && [ "$(ls -A "$tmp/mine")" = notes ]' \
        "validate --trace into a foreign directory: exit $rc: $(tail -2 "$tmp/err")"
    check '[ -z "$(ls -A "$tmp" | grep "\.tmp\.")" ]' "temporaries left: $(ls "$tmp")"
    # --algo auto --tuning FILE: per size the table's algorithm
    printf '%s\n' "collstep-tuning 1" "platform $tmp/p.xml" "ranks 4" \
        "entry allreduce 0 300000 rhd - - 10" "entry allreduce 300001 1073741824 ring nchunks=2 - 20" \
        >"$tmp/t.tuning"
    cluster 2 2 --rate 400mbit -- "$cs" validate --transport tcp --iface @ADDR@ --platform "$tmp/p.xml" \
        --algo auto --tuning "$tmp/t.tuning" --size 256K,1M --iters 1 --warmup 0 --timeout 30 --format csv
    check '[ $rc = 0 ] && grep -q "^rhd,.*,262144," "$tmp/out" && grep -q "^ring,\"nchunks=2.*,1048576," "$tmp/out" && [ "$(grep -c ",allreduce," "$tmp/out")" = 2 ]' \
        "validate --algo auto: exit $rc: $(cat "$tmp/out") $(tail -3 "$tmp/err")"
    ;;
*) echo "unknown case '$case'"; exit 2 ;;
esac
echo "$pass passed, $failn failed"
[ $failn = 0 ]
