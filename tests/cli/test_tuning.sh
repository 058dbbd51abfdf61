#!/usr/bin/env bash
# test_tuning.sh COLLSTEP - `--algo auto --tuning FILE` in sim and run: a
# tuning table (as `collstep plan -o` writes it) picks per size the
# algorithm, its parameters and the rank map; rows say what it chose; a
# table for another platform or rank count, a size no entry serves, a
# malformed table, --algo auto without a table or a table without auto:
# exit 2 with a message.  With `collstep plan` built, a table it writes is
# used the same way.  `run` is one rank on the shm transport.
source "$(dirname "$0")/common.sh"
P=summit:nodes=1
SIM=("$cs" sim --platform "$P")
cols() { csv_col "$1" "$2" | paste -sd'|'; } # the column as a|b|c
R2="nchunks=2 channels=1 local=1" # ring's parameters in effect with nchunks=2
# expect2 WHAT PATTERN CMD...: exit 2 and PATTERN on stderr
expect2() {
    local what=$1 want=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    [ $rc = 2 ] && grep -q -- "$want" "$tmp/err" && ok ||
        { bad "$what: exit $rc (expected 2 and '$want')"; head -3 "$tmp/err"; }
}

# A hand-written table for the 6 GPUs of one Summit node: recursive
# doubling for small sizes, a 2-chunk ring that crosses the X-Bus at every
# hop for middle sizes, hier 3x2 above.
cat >"$tmp/t.tuning" <<'EOF'
collstep-tuning 1
# written by hand for test_tuning.sh
platform summit:nodes=1
ranks 6
map across 6
n0-g0
n0-g3
n0-g1
n0-g4
n0-g2
n0-g5
entry allreduce 0 65535 rd - - 10.5
entry allreduce 65536 1048576 ring nchunks=2 across 20.25
entry allreduce 1048577 1073741824 hier dims=3x2 - 100
EOF

# --- sim: per size the table's choice --------------------------------------------
"${SIM[@]}" --algo auto --tuning "$tmp/t.tuning" --size 1K:4M:4 --format csv >"$tmp/auto.csv" 2>"$tmp/auto.err"
[ $? = 0 ] && ok || { bad "sim --algo auto: exit $?"; cat "$tmp/auto.err"; }
[ "$(cols "$tmp/auto.csv" algo)" = "rd|rd|rd|ring|ring|ring|hier" ] && ok ||
    bad "sim: algorithms per size: $(cols "$tmp/auto.csv" algo)"
[ "$(cols "$tmp/auto.csv" size_bytes)" = "1024|4096|16384|65536|262144|1048576|4194304" ] && ok ||
    bad "sim: sizes in order: $(cols "$tmp/auto.csv" size_bytes)"
[[ "$(cols "$tmp/auto.csv" params)" == "|||$R2|$R2|$R2|dims=3x2 algos=auto nchunks=1"* ]] &&
    ok || bad "sim: params column says what the table chose: $(cols "$tmp/auto.csv" params)"
grep -q "262144 B: ring $R2, ranks mapped by the table from .*t.tuning (65536 to 1048576 bytes" \
    "$tmp/auto.err" && ok || { bad "sim says which entry served a size"; cat "$tmp/auto.err"; }
# the mapped ring is simulated on the table's map (a simulation of its
# own): the same times as --map with those hosts
printf 'n0-g0\nn0-g3\nn0-g1\nn0-g4\nn0-g2\nn0-g5\n' >"$tmp/across.map"
"${SIM[@]}" --algo ring --param nchunks=2 --map "$tmp/across.map" --size 64K,256K,1M --format csv \
    >"$tmp/map.csv" 2>/dev/null
want=$(cols "$tmp/map.csv" time_us)
got=$(python3 -c 'import csv,sys; print("|".join(r["time_us"] for r in csv.DictReader(open(sys.argv[1])) if r["algo"]=="ring"))' "$tmp/auto.csv")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "the table's map: ring times $got, with --map $want"
"${SIM[@]}" --algo ring --param nchunks=2 --size 64K --format csv >"$tmp/plain.csv" 2>/dev/null
[ "$(cols "$tmp/plain.csv" time_us)" != "$(echo "$want" | cut -d'|' -f1)" ] && ok ||
    bad "the map across the X-Bus should change the ring's time (else the map test proves nothing)"
"${SIM[@]}" --algo auto --tuning "$tmp/t.tuning" --size 4M --compare >"$tmp/out" 2>/dev/null
[ $? = 0 ] && grep -q "hier" "$tmp/out" && ok || bad "sim --algo auto --compare"

# --- errors ---------------------------------------------------------------------
expect2 "auto without a table" "--algo auto needs --tuning" "${SIM[@]}" --algo auto --size 1K
expect2 "a table without auto" "--tuning .*: only with --algo auto" "${SIM[@]}" --algo ring --tuning "$tmp/t.tuning" --size 1K
expect2 "another platform" "not summit:nodes=2" "$cs" sim --platform summit:nodes=2 --algo auto --tuning "$tmp/t.tuning" --size 1K
expect2 "another rank count" "6 ranks" "${SIM[@]}" --ranks 4 --algo auto --tuning "$tmp/t.tuning" --size 1K
expect2 "a size no entry serves" "2147483648" "${SIM[@]}" --algo auto --tuning "$tmp/t.tuning" --size 2G
expect2 "--param with auto" "--param: not with --algo auto" "${SIM[@]}" --algo auto --tuning "$tmp/t.tuning" --size 1K --param nchunks=2
expect2 "--map and the table's map" "maps the ranks itself" "${SIM[@]}" --algo auto --tuning "$tmp/t.tuning" --size 64K --map "$tmp/across.map"
expect2 "--trace over two maps" "different rank maps" "${SIM[@]}" --algo auto --tuning "$tmp/t.tuning" --size 1K,64K --trace "$tmp/tr"
[ ! -e "$tmp/tr" ] && ok || bad "--trace refused, yet written"
expect2 "a missing table" "nope.tuning" "${SIM[@]}" --algo auto --tuning "$tmp/nope.tuning" --size 1K
sed 's/^entry allreduce 0 65535 rd/entry allreduce 0 64x rd/' "$tmp/t.tuning" >"$tmp/bad.tuning"
expect2 "a malformed table" "bad.tuning:12:[0-9]*:" "${SIM[@]}" --algo auto --tuning "$tmp/bad.tuning" --size 1K
sed 's/ring nchunks=2 across/ring bogus=1 across/' "$tmp/t.tuning" >"$tmp/key.tuning"
expect2 "a parameter the algorithm lacks" "bogus" "${SIM[@]}" --algo auto --tuning "$tmp/key.tuning" --size 64K

# --- run: the same table on one rank ------------------------------------------------
cat >"$tmp/one.tuning" <<'EOF'
collstep-tuning 1
platform summit:nodes=1
ranks 1
entry allreduce 0 65535 rd - - 1
entry allreduce 65536 1073741824 ring nchunks=2 - 2
EOF
run1 --coll allreduce --algo auto --tuning "$tmp/one.tuning" --size 16K,256K --format csv >"$tmp/run.csv" 2>"$tmp/run.err"
[ $? = 0 ] && ok || { bad "run --algo auto: exit $?"; cat "$tmp/run.err"; }
[ "$(cols "$tmp/run.csv" algo)" = "rd|ring" ] && [ "$(cols "$tmp/run.csv" params)" = "|$R2" ] && ok ||
    bad "run: rows say what the table chose: $(cols "$tmp/run.csv" algo) / $(cols "$tmp/run.csv" params)"
grep -q "262144 B: ring $R2 from" "$tmp/run.err" && ok || bad "run says which entry served a size"
run1 --coll allreduce --algo auto --tuning "$tmp/t.tuning" --size 1K >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "6 ranks" "$tmp/err" && ok || bad "run: a table for 6 ranks on 1"
run1 --coll allreduce --algo auto --size 1K >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "needs --tuning" "$tmp/err" && ok || bad "run: auto without a table"
run1 --coll allreduce --algo ring --tuning "$tmp/one.tuning" --size 1K >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "only with --algo auto" "$tmp/err" && ok || bad "run: a table without auto"
run1 --coll allreduce --algo auto --tuning "$tmp/one.tuning" --size 2G >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "2147483648" "$tmp/err" && ok || bad "run: a size no entry serves"

# --- help -----------------------------------------------------------------------------
for c in sim run; do
    "$cs" $c --help | grep -q -- "--algo auto" && "$cs" $c --help | grep -q -- "--tuning FILE" && ok ||
        bad "$c --help documents --algo auto and --tuning"
done

# --- a table written by collstep plan --------------------------------------------------
if "$cs" plan --help >/dev/null 2>&1; then
    PP=x86-p100-pcie-10gbe:nodes=2
    timeout 240 "$cs" plan --platform "$PP" --coll allreduce --size 64K:1M -o "$tmp/plan.tuning" \
        >"$tmp/plan.out" 2>"$tmp/plan.err"
    rc=$?
    [ $rc = 0 ] && ok || { bad "collstep plan -o: exit $rc"; tail -3 "$tmp/plan.err"; }
    if [ $rc = 0 ]; then
        "$cs" sim --platform "$PP" --algo auto --tuning "$tmp/plan.tuning" --size 64K:1M --format csv \
            >"$tmp/plan.csv" 2>"$tmp/plan.err"
        [ $? = 0 ] && [ "$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$tmp/plan.csv")" = 5 ] &&
            ok || { bad "sim with plan's table"; tail -3 "$tmp/plan.err"; }
        expect2 "plan's table on another platform" "not summit:nodes=1" "${SIM[@]}" --algo auto --tuning "$tmp/plan.tuning" --size 64K
    fi
fi

finish
