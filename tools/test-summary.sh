#!/bin/bash
# Add up the per-suite counts and print the one line CI looks for.
# usage: tools/test-summary.sh DIR SUITE...
set -u
dir=$1
shift
p=0 f=0 s=0
for suite in "$@"; do
    if [ ! -f "$dir/$suite" ]; then
        echo "suite $suite did not run to completion (build or runner failure)"
        f=$((f + 1))
        continue
    fi
    read -r sp sf ss <"$dir/$suite"
    t=""
    if [ -f "$dir/$suite.time" ]; then
        read -r tw tu ts <"$dir/$suite.time"
        t=$(printf '  %5ds wall %5ds CPU' "$tw" $((tu + ts)))
    fi
    printf '  %-13s %4d passed %4d failed %4d skipped%s\n' "$suite" "$sp" "$sf" "$ss" "$t"
    p=$((p + sp)) f=$((f + sf)) s=$((s + ss))
done
for step in build san-build; do
    if [ -f "$dir/$step.time" ]; then
        read -r tw tu ts <"$dir/$step.time"
        printf '  %-13s %-36s  %5ds wall %5ds CPU\n' "($step)" "" "$tw" $((tu + ts))
    fi
done
echo "tests: $p passed, $f failed, $s skipped"
[ $f -eq 0 ]
