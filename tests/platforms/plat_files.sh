#!/usr/bin/env bash
# plat_files.sh COLLSTEP XMLDIR - SimGrid platform files written for these
# tests (tests/platforms/xml/, one construct each) through the command line:
#   - each loads (`platform show`, exit 0) with the documented derived tiers
#     (docs/platforms.md) and topology figures from its routes;
#   - a ring allreduce simulates on each;
#   - ideal model, flat cluster, backbone cluster, 2-level fat tree: the
#     time is 2 (P - 1) (L + S / P / B), L the route's latency sum and B its
#     slowest bandwidth, within 0.1 %;
#   - plain <link>s are split-duplex in the ideal model, shared as written
#     in the calibrated one;
#   - the bottleneck tier of a tapered fat tree is its upper level;
#   - bad input exits 2 with a message naming the problem (file:line where
#     there is one);
#   - pairs of ranks without a route are listed by `platform show`; a
#     schedule sending between them is refused by `sim` naming the step and
#     both hosts, and `plan` refuses the platform.
collstep=$1
dir=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# show FILE: `platform show` must succeed
show() {
  if "$collstep" platform show "$dir/$1.xml" >"$tmp/$1.show" 2>"$tmp/err"; then
    ok
  else
    ko "platform show $1: $(cat "$tmp/err")"
  fi
}
# tier FILE NAME COUNT: the tiers table has NAME with COUNT links
tier() {
  if awk -v t="$2" -v n="$3" '$1 == t && $2 == n { found = 1 } END { exit !found }' "$tmp/$1.show"; then
    ok
  else
    ko "$1: expected tier $2 with $3 links in:
$(sed -n '3,12p' "$tmp/$1.show")"
  fi
}
# simtime FILE ARGS...: prints the simulated time in us of a ring allreduce
simtime() {
  local f=$1; shift
  "$collstep" sim --platform "$dir/$f.xml" --algo ring --format csv "$@" >"$tmp/sim.csv" 2>"$tmp/err" ||
    { echo "ERR $(cat "$tmp/err")"; return; }
  # the time_us column, found by its header; the data row is the last line
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_us") c = i } END { print $c }' "$tmp/sim.csv"
}
# near WHAT GOT WANT: within 0.1 %
near() {
  if awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-3 * w) }'; then
    ok
  else
    ko "$1: time $2 us, alpha-beta formula $3 us"
  fi
}
# bad WANT COMMAND...: exit 2 and WANT in stderr
bad() {
  local want=$1; shift
  "$collstep" "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/err"; then
    ok
  else
    ko "collstep $* -> exit $rc, stderr: $(head -c 400 "$tmp/err") (wanted exit 2 and '$want')"
  fi
}

# ---- every construct loads, with its derived tiers, and simulates ----------
for f in flat backbone fattree fattree_tapered torus dragonfly zones cabinet peers duplex; do
  show $f
  grep -q "^topology: .* bisection" "$tmp/$f.show" && ok || ko "$f: no topology figures"
  t=$(simtime $f --size 1M)
  awk -v t="$t" 'BEGIN { exit !(t + 0 > 0) }' && ok || ko "$f: ring allreduce did not simulate: $t"
done
tier flat host 8
tier backbone host 8
tier backbone backbone 1
tier backbone limiter 8
tier backbone loopback 8
tier fattree level1 8
tier fattree level2 4
tier fattree_tapered level1 16
tier fattree_tapered level2 4
tier torus torus-d0 8
tier torus torus-d1 8
tier torus torus-d2 8
tier dragonfly local 16
tier dragonfly row 4
tier dragonfly group 4
tier dragonfly global 1
tier zones nvlink 2
tier zones nic 6
tier zones bypass 1
tier zones link 5
tier cabinet host 8
tier cabinet backbone 1
tier peers peer 4
tier duplex link 1
# ranks: devices in document order; else every host sorted by name (SMPI)
grep -q "Rank hosts: 0=a0, 1=a1, 2=b0, 3=b1, 4=c0, 5=d0$" "$tmp/zones.show" && ok ||
  ko "zones: devices in document order: $(grep 'Rank hosts' "$tmp/zones.show")"
grep -q "Rank hosts: 0=node-0, 1=node-1, 2=node-10, 3=node-11," "$tmp/fattree_tapered.show" && ok ||
  ko "fattree_tapered: hosts sorted by name: $(grep 'Rank hosts' "$tmp/fattree_tapered.show")"
# figures of a hand-written fat tree: 4 links between leaves; the tapered
# tree's bisection is its 4 level2 uplinks... of the leaves on each side
grep -q "diameter 4 hops" "$tmp/fattree.show" && ok || ko "fattree: diameter $(grep topology: "$tmp/fattree.show")"

# an exported preset whose links were then edited: the figures are the
# file's (the preset's bisection is 25 GB/s: 2 rails of 12.5)
"$collstep" platform export summit:nodes=2 -o "$tmp/s2.xml" 2>/dev/null
sed -E 's/(<link id="nic-[^"]*" bandwidth=")[0-9]+Bps/\11000000000Bps/' "$tmp/s2.xml" >"$tmp/s2e.xml"
"$collstep" platform show "$tmp/s2e.xml" >"$tmp/s2e.show" 2>&1
grep -q "^topology: .*bisection 2.000 GB/s" "$tmp/s2e.show" && ok ||
  ko "edited export: $(grep '^topology' "$tmp/s2e.show")"
awk '$1 == "nic" && $3 == "1.000" { f = 1 } END { exit !f }' "$tmp/s2e.show" && ok ||
  ko "edited export: nic tier $(grep '^nic' "$tmp/s2e.show")"

# ---- alpha-beta, ideal model: 8 ranks, 8 MiB, 1 MiB per step ---------------
S=8388608
formula() { awk -v p=8 -v s=$S -v l="$1" -v b="$2" 'BEGIN { printf "%.4f", 2 * (p - 1) * (l + s / p / b * 1e6) }'; }
# flat: private link UP + DOWN, 1 us each, 10 GB/s
near flat "$(simtime flat --size $S)" "$(formula 2 10e9)"
# backbone: limiter (0 us), link 1 us, backbone 5 us (FATPIPE 5 GB/s, the
# slowest), link 1 us, limiter
near backbone "$(simtime backbone --size $S)" "$(formula 7 5e9)"
# fat tree, ranks 0..7 in two leaves: the slowest ring pair crosses the top
# level, 4 links of 1 us, 10 GB/s, and no two flows share a link direction
near fattree "$(simtime fattree --size $S)" "$(formula 4 10e9)"
# plain <link>, 2 ranks sending to each other at once: split-duplex in the
# ideal model (10 us + 1 MiB / 1 GB/s per step, 2 steps); shared as written
# in the calibrated model (each direction half the bandwidth)
near duplex "$(simtime duplex --size 2M)" 2117.152
t=$(simtime duplex --size 2M --model calibrated)
awk -v t="$t" 'BEGIN { exit !(t + 0 > 1.9 * 2117.152) }' && ok ||
  ko "duplex calibrated: $t us, expected the shared link to halve the bandwidth"

# ---- bottleneck tier of a tapered fat tree ---------------------------------
if "$collstep" sim --platform "$dir/fattree_tapered.xml" --algo ring --size 16M \
     --map "$dir/fattree_tapered.map" --trace "$tmp/tr" --trace-no-plot >/dev/null 2>"$tmp/err"; then
  grep -q '"bottleneck_tier":"level2"' "$tmp/tr/summary.json" && ok ||
    ko "tapered fat tree: bottleneck $(grep -o '"bottleneck_tier":"[^"]*"' "$tmp/tr/summary.json")"
else
  ko "tapered fat tree trace: $(cat "$tmp/err")"
fi

# ---- bad input: exit 2, the file:line or the hosts named -------------------
for verb in show sim; do
  if [ $verb = show ]; then run=(platform show); else run=(sim --algo ring --size 1M --platform); fi
  bad "bad_xml.xml:7:" "${run[@]}" "$dir/bad_xml.xml"
  bad 'bad_attr.xml:9:36: SimGrid cannot load it: Invalid XML (XML input line 9, state 86): Bad attribute `lat'"'"' in `link'"'"' element start tag.' "${run[@]}" "$dir/bad_attr.xml"
  bad 'bad_number.xml:9:29: SimGrid cannot load it: cannot parse number:fast: expected a number, with its unit' "${run[@]}" "$dir/bad_number.xml"
  bad 'bad_number2.xml:9:32: SimGrid cannot load it: cannot parse number:fast' "${run[@]}" "$dir/bad_number2.xml"
  bad 'bad_attr_tab.xml:9:36: SimGrid cannot load it' "${run[@]}" "$dir/bad_attr_tab.xml"
  bad 'bad_ctn_host.xml:10:42: SimGrid cannot load it: Link not found: b' "${run[@]}" "$dir/bad_ctn_host.xml"
  bad 'bad_unit.xml:9: SimGrid cannot load it: unknown unit:  us: expected a unit right after the number' "${run[@]}" "$dir/bad_unit.xml"
  # SimGrid reports at the zone's end tag: the <host_link>'s line and column
  bad "bad_hostlink_host.xml:10:18: SimGrid cannot load it: Host not found: 'g5': expected the id of a host of the zone in this <host_link>" "${run[@]}" "$dir/bad_hostlink_host.xml"
  # a commented-out <host_link> and blanks around '=' do not mislead it
  bad "bad_hostlink_comment.xml:11:20: SimGrid cannot load it: Host not found: 'g5': expected the id of a host of the zone in this <host_link>" "${run[@]}" "$dir/bad_hostlink_comment.xml"
  # SimGrid's words say the opposite ("does name a node"): said plainly
  bad "bad_route_dst.xml:18:24: SimGrid cannot load it: Route dst='g9' does name a node. Existing netpoints: 'g0','g1','g2','g3': no host, router or zone of the file is named 'g9'" "${run[@]}" "$dir/bad_route_dst.xml"
  bad 'bad_simgrid.xml:10:42: SimGrid cannot load it: Link not found: nosuchlink: no <link id="nosuchlink"> is declared' "${run[@]}" "$dir/bad_simgrid.xml"
  bad "zerobw.xml:9: link zero has bandwidth 0" "${run[@]}" "$dir/zerobw.xml"
  bad "infbw.xml:9: link zero has bandwidth inf B/s: a bandwidth must be a finite number" "${run[@]}" "$dir/infbw.xml"
  bad "zerospeed.xml:6: host a has speed 0 flop/s: a host that runs a rank needs a positive" "${run[@]}" "$dir/zerospeed.xml"
  bad "the platform has no host" "${run[@]}" "$dir/nohosts.xml"
  bad "baddevice.xml:7: <host> has device 'tpu'" "${run[@]}" "$dir/baddevice.xml"
done
# ---- pairs of ranks without a route: shown, and a schedule using one refused
# listed: show NAME TEXT
listed() {
  show "$1"
  grep -qF -- "$2" "$tmp/$1.show" && ok || ko "$1: expected '$2' in: $(grep -i unroutable "$tmp/$1.show")"
}
listed noroute "Unroutable: 1 of the 3 pairs of ranks (every pair read) have no route both ways"
listed noroute "a (rank 0) - b (rank 1): no route either way."
listed oneway "a (rank 0) - b (rank 1): a route only from a to b."
listed nonezone "a (rank 0) - b (rank 1): no route either way."
bad "allreduce ring (3 ranks): rank 0, step 0, sends to rank 1, but host a (rank 0, $dir/noroute.xml:6) has no route to host b (rank 1, $dir/noroute.xml:7) (nor the other way)" \
  sim --algo ring --size 1M --platform "$dir/noroute.xml"
bad "rank 1, step 0, sends to rank 0, but host b (rank 1, $dir/oneway.xml:7) has no route to host a (rank 0, $dir/oneway.xml:6) (only the other way)" \
  sim --algo ring --size 1M --platform "$dir/oneway.xml"
bad "but host a (rank 0, $dir/nonezone.xml:7) has no route to host b" sim --algo ring --size 1M --platform "$dir/nonezone.xml"
# plan needs every pair
bad "noroute.xml: 1 pair of the 3 ranks has no route both ways (a (rank 0) - b (rank 1): no route either way)" \
  plan --size 1M --platform "$dir/noroute.xml"
printf 'node-0\nnode-1\nnosuchhost\n' >"$tmp/map"
bad "no host named 'nosuchhost'" sim --platform "$dir/flat.xml" --algo ring --size 1M --ranks 3 --map "$tmp/map"
bad "only 8" sim --platform "$dir/flat.xml" --algo ring --size 1M --ranks 9
# no dangling trace directory when the platform is refused
bad "has no route to host a" sim --platform "$dir/oneway.xml" --algo ring --size 1M --trace "$tmp/tr2"
ls -d "$tmp"/tr2* >/dev/null 2>&1 && ko "a refused platform left $(ls -d "$tmp"/tr2*)" || ok

echo "plat_files: $pass passed, $fail failed"
[ $fail -eq 0 ]
