# usage_checks.sh - sourced by the tests that drive one subcommand with good
# and bad arguments (tests/sim/sim_cli.sh, tests/planner/plan_cli.sh):
#   collstep, tmp, pass, fail   the binary ($1 of the test), a scratch folder
#                               removed at exit, the counts
#   expect_usage CMD TEXT ARGS...  `collstep CMD ARGS...` must exit 2 with TEXT
#                               (case-insensitive) on stderr
#   check WHAT COMMAND...       COMMAND must succeed
collstep=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_usage() {
  local cmd=$1 want=$2; shift 2
  "$collstep" "$cmd" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qi -- "$want" "$tmp/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: collstep $cmd $* -> exit $rc, stderr: $(head -c 300 "$tmp/err") (wanted exit 2 and '$want')" >&2
  fi
}
check() { # DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what" >&2; fi
}
