#!/usr/bin/env bash
# test_env_table.sh COLLSTEP SRCDIR - every environment variable collstep
# reads is in the one table that `collstep --help-env` prints: no source file
# reads a CS_ variable with getenv (they go through cs_env_get), and every
# name given to cs_env_get is listed.
set -u
cs=$1 src=$2
pass=0 fail=0
table=$("$cs" --help-env) || { echo "FAIL: --help-env exits non-zero"; exit 1; }
files=$(cd "$src" && git ls-files -- core algorithms platforms traces sim exec interop cli 2>/dev/null | grep -E '\.(c|cpp|cu|h)$' ||
        find core algorithms platforms traces sim exec interop cli -name '*.[ch]' -o -name '*.cpp')
direct=$(cd "$src" && grep -n 'getenv("CS_' $files | grep -v '^core/cs_env.c:')
if [ -z "$direct" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: getenv of a CS_ variable outside core/cs_env.c:"; echo "$direct"; fi
names=$(cd "$src" && grep -oh 'cs_env_get("[A-Z_]*")' $files | sed 's/.*("\(.*\)")/\1/' | sort -u)
[ -n "$names" ] || { echo "FAIL: no cs_env_get call found under $src"; exit 1; }
for n in $names; do
    if printf '%s\n' "$table" | grep -qE "(^|[ ,])$n([ ,]|$)"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: $n is read but not in collstep --help-env"; fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
