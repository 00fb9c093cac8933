#!/bin/bash
# Run each test script (isolated process, timeout) and record counts.
# A script passes with exit 0, is skipped with exit 77 (automake's convention).
# usage: tools/run-scripts.sh RESULT SCRIPT...
set -u
result=$1
shift
pass=0 fail=0 skip=0
for t in "$@"; do
    [ -f "$t" ] || continue
    log=$(mktemp)
    t0=$SECONDS
    timeout "${SCRIPT_TIMEOUT:-300}" bash "$t" >"$log" 2>&1
    rc=$?
    took="$((SECONDS - t0)) s"
    case $rc in
    0) pass=$((pass + 1)); echo "[PASS] $t ($took)" ;;
    77) skip=$((skip + 1)); echo "[SKIP] $t ($took): $(tail -1 "$log")" ;;
    *) fail=$((fail + 1)); echo "[FAIL] $t (exit $rc, $took)"; sed 's/^/    /' "$log" | tail -40 ;;
    esac
    rm -f "$log"
done
echo "$pass $fail $skip" > "$result"
[ $fail -eq 0 ]
