#!/usr/bin/env bash
# plat_gpus.sh COLLSTEP - the rail-optimized presets (hgx-h100, hgx-h200,
# gb200-nvl72, mi300x) from the command line:
#   - `platform list` names them; `platform show` draws each with its worked
#     routes, its tiers and its switches that reduce;
#   - a ring allreduce simulates on each at small scale, within the NIC's
#     line rate between nodes and the NVLink's inside one;
#   - allreduce nvls runs where the NVSwitch reduces and is refused, exit 2,
#     with nvls=0 and on mi300x; allreduce sharp needs sharp=1;
#   - `platform export` writes a file that `platform show` reads back with
#     the same tiers table and switches.
collstep=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# has FILE TEXT: TEXT is in FILE
has() { if grep -qF -- "$2" "$1"; then ok; else ko "$1 lacks '$2':
$(head -20 "$1")"; fi; }
# busbw PLATFORM ALGO ARGS...: the busbw column of a 256 MiB allreduce
busbw() {
  local plat=$1 algo=$2; shift 2
  "$collstep" sim --platform "$plat" --algo "$algo" --size 256M --format csv "$@" \
    >"$tmp/sim.csv" 2>"$tmp/err" || { echo "ERR $(cat "$tmp/err")"; return; }
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "busbw_GBps") c = i } END { print $c }' \
    "$tmp/sim.csv"
}
# within WHAT GOT LO HI
within() {
  if awk -v g="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(g != "" && g + 0 >= lo && g + 0 <= hi) }'; then
    ok
  else
    ko "$1: busbw $2, expected $3 to $4"
  fi
}
# refused WANT COMMAND...: exit 2 and WANT on stderr
refused() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" = 2 ] && grep -qF -- "$want" "$tmp/err"; then ok; else
    ko "$* exited $rc, expected 2 with '$want': $(cat "$tmp/err")"; fi
}

"$collstep" platform list >"$tmp/list" 2>&1
for p in hgx-h100 hgx-h200 gb200-nvl72 mi300x; do has "$tmp/list" "$p "; done

for p in hgx-h100 gb200-nvl72 mi300x; do
  "$collstep" platform show "$p" >"$tmp/$p.show" 2>&1 || ko "platform show $p"
  has "$tmp/$p.show" "Worked routes."
  has "$tmp/$p.show" "nic "
done
has "$tmp/hgx-h100.show" "+====+====+== n0-nvs ===+====+====+"
has "$tmp/hgx-h100.show" "n0-nvs (nvls, zone n0-nvls): 8 hosts"
has "$tmp/gb200-nvl72.show" "r0-nvs (nvls, zone r0-nvls): 72 hosts"
has "$tmp/gb200-nvl72.show" "0=r0-t0-g0, 1=r0-t0-g1, 2=r0-t0-g2, 3=r0-t0-g3, 4=r0-t1-g0"
has "$tmp/mi300x.show" "xgmi               28         64.000"

# rings: inside a node below the NVLink / xGMI rate, between nodes below 50 GB/s
within "hgx-h100 ring" "$(busbw hgx-h100 ring)" 300 450
within "hgx-h100:nodes=2 ring" "$(busbw hgx-h100:nodes=2 ring)" 40 50
within "gb200-nvl72 ring, 4 ranks (tray r0-t0)" "$(busbw gb200-nvl72 ring --ranks 4)" 600 900
within "gb200-nvl72:racks=2 ring, 144 ranks" "$(busbw gb200-nvl72:racks=2 ring)" 40 50
within "mi300x ring" "$(busbw mi300x ring)" 40 64
within "mi300x:nodes=2 ring" "$(busbw mi300x:nodes=2 ring)" 30 50
# NVLS: above the ring inside a node; refused without a reducing switch
within "hgx-h100 nvls" "$(busbw hgx-h100 nvls)" 450 900
refused "platform hgx-h100:nvls=0 has no zone with a reduce property" \
  "$collstep" sim --platform hgx-h100:nvls=0 --algo nvls --size 1M
refused "platform mi300x has no zone with a reduce property" \
  "$collstep" sim --platform mi300x --algo nvls --size 1M
# SHARP on the InfiniBand switches only with sharp=1
within "hgx-h100:nodes=2,sharp=1 sharp" "$(busbw hgx-h100:nodes=2,sharp=1 sharp)" 20 100
refused "has no zone with a reduce property" \
  "$collstep" sim --platform hgx-h100:nodes=2,nvls=0 --algo sharp --size 1M

# export and read back
for spec in hgx-h100:nodes=2,sharp=1 gb200-nvl72:racks=2 mi300x:nodes=2,oversub=2; do
  "$collstep" platform show "$spec" >"$tmp/a.show" 2>&1 || ko "show $spec"
  "$collstep" platform export "$spec" -o "$tmp/e.xml" 2>"$tmp/err" || ko "export $spec: $(cat "$tmp/err")"
  "$collstep" platform show "$tmp/e.xml" >"$tmp/b.show" 2>"$tmp/err" || ko "show exported $spec: $(cat "$tmp/err")"
  # the tiers table: the lines after the header up to the first blank line
  if diff <(sed -n '3,/^$/p' "$tmp/a.show" | sort) <(sed -n '3,/^$/p' "$tmp/b.show" | sort) >"$tmp/diff"; then
    ok
  else
    ko "$spec: the exported file's tiers differ: $(cat "$tmp/diff")"
  fi
  if diff <(grep -c "^  .* (nvls\|^  .* (sharp" "$tmp/a.show") <(grep -c "^  .* (nvls\|^  .* (sharp" "$tmp/b.show") >/dev/null; then
    ok
  else
    ko "$spec: the exported file's switches differ"
  fi
done

echo "plat_gpus: $pass passed, $fail failed"
[ "$fail" = 0 ]
