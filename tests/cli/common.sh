# common.sh - sourced by the command-line tests that drive `sim` and `run`:
#   cs        the collstep binary ($1 of the test)
#   tmp       a scratch folder, removed at exit; XDG_CACHE_HOME inside it
#   ok / bad  count a check passed / failed (bad says what)
#   run1      `collstep run` as one rank on the shm transport (env bootstrap)
#   csv_col FILE COLUMN   the values of a CSV column, one a line
#   finish    print the counts; the test's exit status
set -u
cs=$(readlink -f "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
pass=0 fail=0
port=$((21000 + $$ % 20000))
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
run1() { port=$((port + 1)); env RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$cs" run --transport shm --iters 1 --warmup 0 "$@"; }
csv_col() { python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print("\n".join(x[sys.argv[2]] for x in r))' "$1" "$2"; }
finish() { echo "$pass passed, $fail failed"; [ $fail = 0 ]; }
