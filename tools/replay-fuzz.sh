#!/bin/bash
# Replay each fuzz target's corpus (tests/fuzz/corpus/<target>/) once, as a
# regression test: every input ever found interesting, crashes included, must
# now run clean. One pass per target counts as one test.
# usage: tools/replay-fuzz.sh RESULT BINARY...
set -u
result=$1
shift
pass=0 fail=0 skip=0
for bin in "$@"; do
    name=$(basename "$bin")
    corpus=tests/fuzz/corpus/${name#fuzz_}
    if [ ! -d "$corpus" ]; then
        skip=$((skip + 1)); echo "[SKIP] $name: no corpus at $corpus"; continue
    fi
    log=$(mktemp)
    if timeout 300 "$bin" -runs=0 -rss_limit_mb=2048 "$corpus" >"$log" 2>&1; then
        pass=$((pass + 1)); echo "[PASS] $name ($(ls "$corpus" | wc -l) inputs)"
    else
        fail=$((fail + 1)); echo "[FAIL] $name"; tail -30 "$log" | sed 's/^/    /'
    fi
    rm -f "$log"
done
echo "$pass $fail $skip" > "$result"
[ $fail -eq 0 ]
