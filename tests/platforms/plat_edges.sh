#!/usr/bin/env bash
# plat_edges.sh COLLSTEP XMLDIR - the edges a hand-written SimGrid platform
# meets (tests/platforms/xml/, one file each), through the command line:
#   - a file SimGrid 3.32 refuses (hostlink_split: a <host_link> naming a
#     SPLITDUPLEX link instead of its halves, where SimGrid aborts with a
#     backtrace; ctn_direction: a <link_ctn> direction on a link that has no
#     halves): `platform show`, `sim`, `plan` and `validate` all exit 2 with
#     the same one line (file:line, SimGrid's words, what is missing), no
#     backtrace;
#   - host links written in the style of SimGrid's routing_cluster.xml
#     (hostlink_plain: a plain link named up and down) simulate;
#   - pairs of ranks without a route (dogbone): listed by `platform show`; a
#     ring over routed pairs (dogbone.map) simulates; a schedule sending
#     between unrouted ranks is refused naming the schedule, rank, step and
#     both hosts;
#   - one link half carrying a rank's sends and receives (star_nodir): said
#     by `platform show` per model, and once by `sim`;
#   - reductions slower than the links (slow_reduce, speed="1Gf"): the rate
#     in `platform show`, and the trace names "reduction" the bottleneck;
#   - two clusters without collstep_dims (two_clusters): `sim --algo hier`
#     runs dims=4x2, the tiers `plan` finds.
collstep=$1
dir=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache" TMPDIR="$tmp"
mkdir -p "$HOME"

ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# run NAME ARGS...: stdout to $tmp/NAME.out, stderr to $tmp/NAME.err, exit code in $rc
run() {
  local name=$1; shift
  "$collstep" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
}
# has FILE TEXT: FILE holds TEXT (fixed string)
has() {
  grep -qF -- "$2" "$1" && ok || ko "$(basename "$1"): expected '$2' in: $(head -c 1500 "$1")"
}

# ---- files SimGrid refuses: one line from every command ----------------------
# refused FILE WANT: exit 2, one line, WANT in it, no SimGrid log, the same
# message from platform show, sim, plan and validate
port=$((30000 + RANDOM % 30000))
cmds="platform sim plan"
"$collstep" validate --help >/dev/null 2>&1 && cmds="$cmds validate" # built with exec/
refused() {
  local f=$dir/$1.xml want=$2 cmd msg first=""
  for cmd in $cmds; do
    case $cmd in
      platform) run r platform show "$f" ;;
      sim) run r sim --platform "$f" --algo ring --size 1M ;;
      plan) run r plan --platform "$f" --size 1M --budget 10 ;;
      validate)
        port=$((port + 1))
        RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
          run r validate --platform "$f" --coll allreduce --algo ring --size 1K --timeout 20 ;;
    esac
    [ "$rc" = 2 ] && ok || ko "$cmd $1: exit $rc, expected 2: $(cat "$tmp/r.err")"
    [ "$(wc -l <"$tmp/r.err")" = 1 ] && ok || ko "$cmd $1: not one line: $(cat "$tmp/r.err")"
    has "$tmp/r.err" "$want"
    grep -qE "Backtrace|CRITICAL|died of" "$tmp/r.err" && ko "$cmd $1: SimGrid's log: $(cat "$tmp/r.err")" || ok
    # the message itself, after "collstep CMD: " (validate: "--platform F: ")
    msg=$(sed -e 's/^collstep [a-z]*: //' -e 's/^--platform [^ ]*: //' "$tmp/r.err")
    if [ -z "$first" ]; then first=$msg; else
      [ "$msg" = "$first" ] && ok || ko "$cmd $1 says '$msg', platform show said '$first'"
    fi
  done
}
refused hostlink_split "hostlink_split.xml:12:27: SimGrid cannot load it: Link 'la' not found!: <host_link> names link la, which line 11 declares SPLITDUPLEX: SimGrid 3.32 names its halves la_UP and la_DOWN; write up=\"la_UP\" down=\"la_DOWN\""
refused ctn_direction "ctn_direction.xml:12:21: SimGrid cannot load it: Link not found: l0: <link_ctn id=\"l0\" direction=\"UP\"> takes one half of a split-duplex link, but line 9 declares l0 with no sharing_policy, which SimGrid takes as SHARED; declare it sharing_policy=\"SPLITDUPLEX\", or drop the direction"

# ---- routing_cluster-style host links simulate -------------------------------
run plain sim --platform "$dir/hostlink_plain.xml" --algo ring --size 1M --format csv
[ "$rc" = 0 ] && ok || ko "hostlink_plain: sim exit $rc: $(cat "$tmp/plain.err")"
grep -qE "Backtrace|died of" "$tmp/plain.err" && ko "hostlink_plain: $(cat "$tmp/plain.err")" || ok
grep -q '^"ring",allreduce,1048576,' "$tmp/plain.out" && ok || ko "hostlink_plain: no row: $(cat "$tmp/plain.out")"

# ---- pairs without a route ----------------------------------------------------
run dog platform show "$dir/dogbone.xml"
[ "$rc" = 0 ] && ok || ko "dogbone: platform show exit $rc: $(cat "$tmp/dog.err")"
has "$tmp/dog.out" "Unroutable: 2 of the 6 pairs of ranks (every pair read) have no route both ways"
has "$tmp/dog.out" "C1 (rank 0) - C2 (rank 1): no route either way; S1 (rank 2) - S2 (rank 3): no route either way."
run dogring sim --platform "$dir/dogbone.xml" --map "$dir/dogbone.map" --algo ring --size 1M --format csv
[ "$rc" = 0 ] && ok || ko "dogbone: a ring over routed pairs: exit $rc: $(cat "$tmp/dogring.err")"
run dogrhd sim --platform "$dir/dogbone.xml" --map "$dir/dogbone.map" --algo rhd --size 1M
[ "$rc" = 2 ] && ok || ko "dogbone: rhd sends S1 -> S2: exit $rc, expected 2"
has "$tmp/dogrhd.err" "collstep sim: allreduce rhd (4 ranks): rank 0, step 0, sends to rank 2, but host S1 (rank 0, $dir/dogbone.xml:14) has no route to host S2 (rank 2, $dir/dogbone.xml:16) (nor the other way)"
run dogdef sim --platform "$dir/dogbone.xml" --algo ring --size 1M
[ "$rc" = 2 ] && ok || ko "dogbone: ring in the platform's order sends C1 -> C2: exit $rc, expected 2"
has "$tmp/dogdef.err" "rank 0, step 0, sends to rank 1, but host C1 (rank 0,"

# ---- shared link halves --------------------------------------------------------
run star platform show "$dir/star_nodir.xml"
has "$tmp/star.out" "Shared link halves (ideal model, the default): 2 of the 4 ranks send and receive through one direction of one link"
has "$tmp/star.out" "rank 1 (h1) sends and receives through the UP half of link l1 ($dir/star_nodir.xml:15)"
has "$tmp/star.out" "give the <link_ctn>s of the routes into h1 direction=\"DOWN\""
has "$tmp/star.out" "Shared link halves (calibrated model, the file as written): 4 of the 4 ranks"
run starsim sim --platform "$dir/star_nodir.xml" --algo ring,rhd --size 1M,4M --format csv
[ "$rc" = 0 ] && ok || ko "star_nodir: sim exit $rc"
[ "$(grep -c "^collstep sim: note: .*star_nodir.xml (ideal model): 2 of the 4 ranks send and receive through one direction of one link" "$tmp/starsim.err")" = 1 ] &&
  ok || ko "star_nodir: sim should say it once: $(cat "$tmp/starsim.err")"

# ---- reductions slower than the links -----------------------------------------
run slow platform show "$dir/slow_reduce.xml"
has "$tmp/slow.out" "Reductions: 1 GB/s per rank: a rank's host speed, 1 flop = 1 byte reduced"
has "$tmp/slow.out" "slower than every link (the slowest tier moves 10 GB/s)"
run slowsim sim --platform "$dir/slow_reduce.xml" --algo ring --size 64M --trace "$tmp/tr" --trace-no-plot
[ "$rc" = 0 ] && ok || ko "slow_reduce: sim --trace exit $rc: $(cat "$tmp/slowsim.err")"
has "$tmp/tr/summary.json" '"bottleneck_tier":"reduction"'
has "$tmp/tr/summary.json" '"reduction":{"busiest_rank":'
run slowtr trace "$tmp/tr"
grep -qE "^  reduction .* <- bottleneck$" "$tmp/slowtr.out" && ok ||
  ko "collstep trace: reductions not the bottleneck: $(cat "$tmp/slowtr.out")"
grep -q "^  host .*<- bottleneck" "$tmp/slowtr.out" && ko "collstep trace: host tier named" || ok

# ---- hier's tiers: sim and plan derive them alike ------------------------------
run two platform show "$dir/two_clusters.xml"
has "$tmp/two.out" "platform $dir/two_clusters.xml ($dir/two_clusters.xml): 8 hosts, dims 4x2"
run twosim sim --platform "$dir/two_clusters.xml" --algo hier --size 4M --format csv
[ "$rc" = 0 ] && ok || ko "two_clusters: sim hier exit $rc: $(cat "$tmp/twosim.err")"
has "$tmp/twosim.out" '"dims=4x2 '
run twoplan plan --platform "$dir/two_clusters.xml" --size 4M --budget 30 --top 1 --format json
[ "$rc" = 0 ] && ok || ko "two_clusters: plan exit $rc: $(cat "$tmp/twoplan.err")"
has "$tmp/twoplan.out" '"factorizations": ["4x2"'
has "$tmp/twoplan.out" '"algo": "hier", "params": "dims=4x2", "order": "platform"'

echo "plat_edges: $pass passed, $fail failed"
[ $fail -eq 0 ]
