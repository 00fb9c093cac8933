#!/bin/bash
# Run a Criterion test binary; record "passed failed skipped" in RESULT.
# usage: tools/run-criterion.sh BINARY RESULT [criterion args...]
set -u
bin=$1 result=$2
shift 2
log=$(mktemp)
# Criterion forks every test and enforces per-test timeouts; the overall
# timeout only guards against a wedged runner.
timeout 600 "$bin" --jobs="${TEST_JOBS:-2}" "$@" 2>&1 | tee "$log" | grep -v '^\[----\]' | grep -E '\[(FAIL|SKIP|ERR )\]|Synthesis|Assertion|ERROR|runtime error' || true
syn=$(grep -a 'Synthesis:' "$log" | tail -1)
rm -f "$log"
if [ -z "$syn" ]; then
    echo "$bin: runner died without a summary" >&2
    exit 1
fi
num() { echo "$syn" | sed -n "s/.*$1: \([0-9]*\).*/\1/p"; }
tested=$(num Tested) passing=$(num Passing) failing=$(num Failing) crashing=$(num Crashing)
skipped=$((tested - passing - failing - crashing))
[ $skipped -lt 0 ] && skipped=0
echo "$passing $((failing + crashing)) $skipped" > "$result"
[ $((failing + crashing)) -eq 0 ]
