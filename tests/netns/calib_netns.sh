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
#   shaper   the cluster script itself: small TCP packets (acknowledgements,
#            control messages) go through the shapers' priority class with
#            --prio small (the default) and through the data's queue with
#            --prio none, both at the shaped rate; bad rates and --prio
#            values exit 2 before anything is built
#   errors   calibrate with one rank (2), validate with a platform of fewer
#            hosts than ranks (2), an unknown algorithm (2), a rank killed
#            mid-calibration (3, naming it): no namespace, no output file, no
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
    CS_NETNS_DELAY_FILE=$tmp/delay "$cluster" -H "$H" -R "$R" "$@" >"$tmp/out" 2>"$tmp/err" &
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
    # a 2-rank ring allreduce of 16 MiB at 100 mbit/s (12.5 MB/s on the wire,
    # TCP's payload about 11.96 MB/s); rank 0 then prints its host's classes
    # (1:10 small packets, 1:20 data) of the egress shaper
    run=(run --transport tcp --iface @ADDR@ --coll allreduce --algo ring --size 16M --iters 2
         --warmup 1 --timeout 60 --format csv)
    for prio in small none; do
        cluster 2 1 --rate 100mbit --prio $prio -- bash -c \
            '"$@" || exit; [ "$RANK" = 0 ] && tc -s class show dev eth0 | tr "\n" " " |
             sed "s/class htb/\nclass htb/g"; echo' _ "$cs" "${run[@]}"
        check '[ $rc = 0 ]' "--prio $prio: exit $rc: $(tail -3 "$tmp/err")"
        check 'grep -q "shaper: htb, .* (--prio $prio)" "$tmp/err"' "--prio $prio: no shaper line: $(head -8 "$tmp/err")"
        # packets sent by each leaf class
        ack=$(sed -n 's/^class htb 1:10 .* Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' "$tmp/out")
        dat=$(sed -n 's/^class htb 1:20 .* Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' "$tmp/out")
        echo "--prio $prio: host 0 egress, small-packet class $ack packets, data class $dat packets"
        if [ $prio = small ]; then
            check '[ "${ack:-0}" -gt 100 ]' "--prio small: small packets not in class 1:10 ($ack packets): $(cat "$tmp/out")"
        else
            check '[ "${ack:--1}" = 0 ] && [ "${dat:-0}" -gt 100 ]' "--prio none: class 1:10 sent $ack packets: $(cat "$tmp/out")"
        fi
        # the ring moves 2 x 8 MiB each way per run: at 100 mbit/s about
        # 1.4 s; a shaper that let data through unshaped would be ~100x faster
        us=$(py "
import csv, io, sys
rows = [r for r in csv.DictReader(io.StringIO(open('$tmp/out').read().split('\nclass htb')[0]))]
print(rows[0]['time_us'] if rows else '')" 2>/dev/null)
        echo "--prio $prio: ring allreduce 16 MiB: ${us:-?} us"
        check "[ -n '$us' ] && py 'import sys; sys.exit(0 if 1.2e6 <= $us <= 2.2e6 else 1)'" \
            "--prio $prio: ring allreduce of 16 MiB took ${us:-?} us, want 1.2-2.2 s at 100 mbit/s"
    done
    for bad in "--prio lifo" "--rate 12x" "--rate 10bit" "--host-rate 1=fast"; do
        "$cluster" -H 2 -R 1 $bad -- true >"$tmp/out" 2>"$tmp/err"
        rc=$?
        check '[ $rc = 2 ] && grep -q "^netns-cluster: --" "$tmp/err"' "option '$bad': exit $rc: $(cat "$tmp/err")"
    done
    check '[ -z "$(ip netns list | grep "^cs${cpid}")" ]' "namespaces left: $(ip netns list)"
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
