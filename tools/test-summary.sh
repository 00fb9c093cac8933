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
    printf '  %-10s %4d passed %4d failed %4d skipped\n' "$suite" "$sp" "$sf" "$ss"
    p=$((p + sp)) f=$((f + sf)) s=$((s + ss))
done
echo "tests: $p passed, $f failed, $s skipped"
[ $f -eq 0 ]
