#!/usr/bin/env bash
# test_cli.sh COLLSTEP - the command line: help, version, exit codes
# (0 ok, 1 negative answer, 2 usage / malformed input), gen -> verify -> stats,
# stats traffic figures, atomic output files.
set -u
cs=$(readlink -f "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # check "what" expected_rc cmd...
  local what=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass+1)); else
    fail=$((fail+1)); echo "FAIL: $what: exit $rc, expected $want"; cat "$tmp/out" "$tmp/err" | head -5; fi
}
grep_out() { # grep_out "what" pattern file
  if grep -q -- "$2" "$3"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1: '$2' not in $3:"; head -5 "$3"; fi
}

check "no args" 2 "$cs"
check "--help" 0 "$cs" --help
check "--version" 0 "$cs" --version
grep_out "version text" "collstep [0-9]" "$tmp/out"
check "unknown command" 2 "$cs" frobnicate
for sub in algos gen verify stats; do check "$sub --help" 0 "$cs" $sub --help; done
check "algos json" 0 "$cs" algos --format json
python3 -c "import json,sys; d=json.load(open('$tmp/out')); assert len(d) >= 22 and all('name' in a and 'params' in a for a in d)" \
  && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL: algos json not valid"; }

# gen -> verify -> stats
check "gen ring 8" 0 "$cs" gen allreduce ring --ranks 8 -o "$tmp/ring8.sched"
check "verify ring 8" 0 "$cs" verify "$tmp/ring8.sched" --run 1001
grep_out "verify says OK" "OK: allreduce on 8 ranks" "$tmp/out"
grep_out "interpreter exact" "all exact" "$tmp/out"
check "stats ring 8" 0 "$cs" stats "$tmp/ring8.sched" --format json
python3 - "$tmp/out" <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL: ring stats traffic"; }
import json, sys
d = json.load(open(sys.argv[1]))
P = d["ranks"]
# ring allreduce sends exactly 2(P-1)/P of the message per rank
assert all(abs(r["sent"] - 2 * (P - 1) / P) < 1e-12 for r in d["ranks_detail"]), d["ranks_detail"][0]
assert d["rounds"] == 2 * (P - 1)
assert abs(d["ab_time_us"] - d["formula_time_us"]) <= 1e-6 * d["formula_time_us"]
PY
check "gen rd 16 | stats -" 0 bash -c "'$cs' gen allreduce rd --ranks 16 | '$cs' stats - --format json > '$tmp/rd.json'"
python3 -c "
import json; d=json.load(open('$tmp/rd.json'))
assert all(abs(r['sent'] - 4.0) < 1e-12 for r in d['ranks_detail']), 'rd sends log2(P) full messages'" \
  && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL: rd traffic"; }
check "gen hier 24" 0 "$cs" gen allreduce hier --ranks 24 --param dims=6x4 --param algos=ring+rhd --verify -o "$tmp/h.sched"
check "gen broadcast root" 0 "$cs" gen broadcast chain --ranks 5 --root 4 --param segments=3 --verify -o "$tmp/b.sched"
# chain's pipelining parameter is nchunks like every other generator's; segments is its old name
check "gen chain nchunks" 0 "$cs" gen broadcast chain --ranks 5 --root 4 --param nchunks=3 -o "$tmp/b2.sched"
check "chain nchunks = segments" 0 cmp -s <(grep -v '^algorithm' "$tmp/b.sched") <(grep -v '^algorithm' "$tmp/b2.sched")
check "chain nchunks and segments disagree" 2 "$cs" gen broadcast chain --ranks 5 --param nchunks=3,segments=4
check "verify broadcast" 0 "$cs" verify "$tmp/b.sched" --run 17 --dtype float --op max

# usage errors: exit 2 and a message
check "gen unknown coll" 2 "$cs" gen allfoo ring --ranks 4
grep_out "unknown coll message" "unknown collective" "$tmp/err"
check "gen unknown algo" 2 "$cs" gen allreduce nosuch --ranks 4
check "gen missing ranks" 2 "$cs" gen allreduce ring
check "gen bad ranks" 2 "$cs" gen allreduce ring --ranks 0
check "gen unknown param" 2 "$cs" gen allreduce ring --ranks 4 --param bogus=1
grep_out "unknown param named" "bogus" "$tmp/err"
check "gen bad dims" 2 "$cs" gen allreduce hier --ranks 24 --param dims=5x5
check "gen root too big" 2 "$cs" gen broadcast binomial --ranks 4 --root 4
check "verify missing file" 2 "$cs" verify "$tmp/nope.sched"
printf 'collstep-schedule 1\ncollective allreduce ranks 2 chunks 1\nrank 0\n  0: sned to 1 in[0:1]\n' > "$tmp/bad.sched"
check "verify malformed" 2 "$cs" verify "$tmp/bad.sched"
grep_out "malformed has line:col" "bad.sched:4:" "$tmp/err"
check "stats malformed" 2 "$cs" stats "$tmp/bad.sched"
check "stats bad latency" 2 "$cs" stats "$tmp/ring8.sched" --latency fast

# an incorrect schedule: exit 1 with findings naming rank and step
sed '/^rank 3$/,/^rank 4$/ s/^\(  6: \)rrecv/\1recv/' "$tmp/ring8.sched" > "$tmp/wrong.sched"
if cmp -s "$tmp/ring8.sched" "$tmp/wrong.sched"; then fail=$((fail+1)); echo "FAIL: mutation did not apply"; fi
check "verify wrong" 1 "$cs" verify "$tmp/wrong.sched"
grep_out "finding names rank" "rank" "$tmp/out"
grep_out "incorrect summary" "INCORRECT" "$tmp/out"

# a schedule too large for the verifier's memory limit: a clear refusal, exit 2
check "verify over memory limit" 2 env CS_VERIFY_MAX_MEM=1000 "$cs" verify "$tmp/ring8.sched"
check "gen --verify over memory limit" 2 env CS_VERIFY_MAX_MEM=64K "$cs" gen allreduce ring --ranks 64 --verify
grep_out "too large message" "too large to verify" "$tmp/err"

# output is whole or not at all: an output path whose directory is missing
# is refused (exit 2) naming the path given, and leaves no file behind
check "gen into missing dir" 2 "$cs" gen allreduce ring --ranks 4 -o "$tmp/no/such/dir/x.sched"
grep_out "missing dir named" "no/such/dir/x.sched: .*no/such/dir does not exist" "$tmp/err"
grep -q '\.tmp\.' "$tmp/err" && { fail=$((fail+1)); echo "FAIL: the message names the temporary"; } || pass=$((pass+1))
[ -z "$(ls "$tmp" | grep '\.tmp')" ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL: temp file left"; }

# platforms (when built)
if "$cs" platform --help >/dev/null 2>&1; then
  check "platform list" 0 "$cs" platform list
  for p in x86-p100-pcie-10gbe minsky-p100-ib100 ac922-v100-ib100 summit dgx1-v100-ib100; do
    grep_out "list names $p" "$p" "$tmp/out"
  done
  check "platform show" 0 "$cs" platform show summit:nodes=4
  grep_out "show tiers" "^nvlink " "$tmp/out"
  grep_out "show tiers host" "^nvlink-host " "$tmp/out"
  grep_out "show figures" "bisection" "$tmp/out"
  check "platform export" 0 "$cs" platform export summit:nodes=4 -o "$tmp/s4.xml"
  grep_out "export has tiers" 'id="tier"' "$tmp/s4.xml"
  check "platform show exported" 0 "$cs" platform show "$tmp/s4.xml"
  grep_out "exported devices" "24 devices" "$tmp/out"
  check "platform unknown preset" 2 "$cs" platform show nosuch
  grep_out "unknown preset lists presets" "summit" "$tmp/err"
  check "platform unknown param" 2 "$cs" platform show summit:flux=3
  check "platform bad verb" 2 "$cs" platform frob
  check "platform export without -o" 2 "$cs" platform export summit
  # a plain <link> without a tier loads with the default tier "link"
  # (docs/platforms.md); SimGrid 3.32 needs the DOCTYPE: said at its line
  printf '<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n<host id="a" speed="1f"/>\n<link id="l" bandwidth="1GBps" latency="1us"/>\n</zone></platform>\n' > "$tmp/nodoctype.xml"
  check "platform without DOCTYPE" 2 "$cs" platform show "$tmp/nodoctype.xml"
  grep_out "no DOCTYPE names line" "nodoctype.xml:2: expected <!DOCTYPE" "$tmp/err"
  sed '1a <!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">' "$tmp/nodoctype.xml" > "$tmp/notier.xml"
  check "platform link without tier" 0 "$cs" platform show "$tmp/notier.xml"
  grep_out "untagged link: tier link" "^link " "$tmp/out"
fi

# platforms SimGrid itself rejects: an error with SimGrid's words, exit 2, no crash
if "$cs" sim --help >/dev/null 2>&1; then
  "$cs" platform export summit:nodes=2 -o "$tmp/s2.xml" 2>/dev/null
  sed 's/<link_ctn id="nvlink-n0-g0-g1"/<link_ctn id="nvlink-n9-g0-g1"/' "$tmp/s2.xml" > "$tmp/badlink.xml"
  sed 's/<route src="n0-g0" dst="n0-g1">/<route src="n0-gX" dst="n0-g1">/' "$tmp/s2.xml" > "$tmp/badroute.xml"
  (cd "$tmp" && "$cs" sim --platform badlink.xml --algo ring --size 1M >out 2>err); rc=$?
  [ $rc -eq 2 ] && grep -q "Link not found: nvlink-n9-g0-g1" "$tmp/err" && pass=$((pass+1)) || {
    fail=$((fail+1)); echo "FAIL: sim on a platform with an undeclared link: exit $rc"; cat "$tmp/err"; }
  (cd "$tmp" && "$cs" sim --platform badroute.xml --algo ring --size 1M >out 2>err); rc=$?
  [ $rc -eq 2 ] && grep -q "badroute.xml:[0-9]" "$tmp/err" && pass=$((pass+1)) || {
    fail=$((fail+1)); echo "FAIL: sim on a platform with a bad route: exit $rc"; cat "$tmp/err"; }
  # a mapping file puts ranks on chosen hosts: two GPUs of one node (NVLink)
  # against two nodes (one EDR rail) must differ, and an unknown host is an error
  printf 'n0-g0\nn1-g0\n' > "$tmp/map.txt"
  printf 'n0-g0\nnope\n' > "$tmp/badmap.txt"
  t_near=$("$cs" sim --platform summit:nodes=2 --algo ring --ranks 2 --size 64M --format csv | awk -F, 'NR==2{print $7}')
  t_far=$("$cs" sim --platform summit:nodes=2 --algo ring --ranks 2 --size 64M --map "$tmp/map.txt" --format csv | awk -F, 'NR==2{print $7}')
  awk -v a="$t_near" -v b="$t_far" 'BEGIN{exit !(a > 0 && b > 3 * a)}' && pass=$((pass+1)) || {
    fail=$((fail+1)); echo "FAIL: --map: same node $t_near us, across nodes $t_far us"; }
  check "sim --map unknown host" 2 "$cs" sim --platform summit:nodes=2 --algo ring --ranks 2 --size 1M --map "$tmp/badmap.txt"
  grep_out "unknown host named" "nope" "$tmp/err"
  check "sim csv names the platform spec" 0 "$cs" sim --platform summit:nodes=2 --algo ring --size 1M --format csv
  grep_out "platform spec in results" "summit:nodes=2" "$tmp/out"
  check "sim -o json" 0 "$cs" sim --platform summit:nodes=2 --algo ring,hier --size 1M:4M --format json -o "$tmp/res.json"
  python3 -c "import json; d=json.load(open('$tmp/res.json')); assert len(d) == 6 and all(r['busbw_GBps'] > 0 for r in d)" \
    && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL: sim -o json content"; }
  check "sim -o into a missing directory" 2 "$cs" sim --platform summit:nodes=2 --algo ring --size 1M -o "$tmp/no/such/res.json"
  grep_out "sim: missing dir named" "no/such/res.json: .*does not exist" "$tmp/err"
  ls "$tmp"/*.btr >/dev/null 2>&1 && { fail=$((fail+1)); echo "FAIL: SimGrid backtrace files left behind"; } || pass=$((pass+1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
