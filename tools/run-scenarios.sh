#!/bin/bash
# Run every scenario under DIR with `corral sim --scenario` and record counts.
# A scenario passes when sim exits 0 (all expectations hold), and runs twice
# with the same placement (determinism). Files under DIR/invalid/ must be
# rejected with exit 2.
# usage: tools/run-scenarios.sh RESULT CORRAL DIR
set -u
result=$1 corral=$2 dir=$3
pass=0 fail=0 skip=0
shopt -s nullglob
for f in "$dir"/*.yaml; do
    out1=$(timeout 60 "$corral" sim --scenario "$f" --output json 2>&1)
    rc=$?
    out2=$(timeout 60 "$corral" sim --scenario "$f" --output json 2>&1)
    if [ $rc -ne 0 ]; then
        fail=$((fail + 1)); echo "[FAIL] $f (exit $rc)"; echo "$out1" | sed 's/^/    /' | tail -20
    elif [ "$out1" != "$out2" ]; then
        fail=$((fail + 1)); echo "[FAIL] $f: two runs placed pods differently"
    else
        pass=$((pass + 1))
    fi
done
for f in "$dir"/invalid/*.yaml; do
    out=$(timeout 60 "$corral" sim --scenario "$f" 2>&1)
    rc=$?
    if [ $rc -eq 2 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "[FAIL] $f: expected exit 2, got $rc"; echo "$out" | sed 's/^/    /' | tail -5
    fi
done
echo "scenarios: $pass passed, $fail failed"
echo "$pass $fail $skip" > "$result"
[ $fail -eq 0 ]
