#!/usr/bin/env bash
# schedule-digest.sh - a digest of every schedule the registry generates over
# a matrix of rank counts, roots and parameters: one line per schedule
# ("COLL ALGO P ROOT PARAMS sha256-prefix") and a last line "total SHA".
# Used to show that a refactoring leaves every generated schedule
# byte-identical: run it before and after and compare the totals.
#
#   scripts/schedule-digest.sh [collstep-binary]   (default build/cli/collstep)
set -euo pipefail
cs=${1:-build/cli/collstep}
ranks="1 2 3 4 5 6 7 8 9 12 16 17 24 32 64"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$cs" algos | awk '/^[a-z]/ {print $1, $2}' | while read -r coll algo; do
  params=("")
  case "$algo" in
    hier) params=("" "algos=ring" "algos=rhd" "nchunks=3") ;;
    torus2d) params=("" "nchunks=2") ;;
    binomial) params=("" "radix=3" "nchunks=4") ;;
    dbtree|chain) params=("" "nchunks=3") ;;
    *) if "$cs" algos | awk -v c="$coll" -v a="$algo" '$1==c && $2==a {f=1; next} /^[a-z]/ {f=0} f && /nchunks/ {found=1} END {exit !found}'; then
         params=("" "nchunks=3"); fi ;;
  esac
  roots=0
  case "$coll" in broadcast|reduce) roots="0 last" ;; esac
  for p in $ranks; do
    for r in $roots; do
      [ "$r" = last ] && r=$((p - 1))
      for prm in "${params[@]}"; do
        args=(gen "$coll" "$algo" --ranks "$p" --root "$r")
        [ -n "$prm" ] && args+=(--param "$prm")
        if txt=$("$cs" "${args[@]}" 2>/dev/null); then
          h=$(printf '%s' "$txt" | sha256sum | cut -c1-16)
        else
          h=unsupported
        fi
        echo "$coll $algo $p $r ${prm:--} $h"
      done
    done
  done
done | tee "$out"
echo "total $(sha256sum < "$out" | cut -c1-16) ($(wc -l < "$out") schedules)"
