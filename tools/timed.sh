#!/bin/bash
# Run a command and record how long it took: "WALL USER SYS" in seconds
# (user and system CPU of everything it ran) in FILE, for the summary of
# `make test` (tools/test-summary.sh). The command's exit status is kept.
# usage: tools/timed.sh FILE CMD...
set -u
out=$1
shift
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
# `times` prints the shell's own times, then its children's: "1m2.345s 0m0.678s".
tf=$(mktemp)
times >"$tf" # not in a pipe: a subshell would report its own children
awk -v s="$start" -v e="$end" 'NR == 2 {
    split($1, u, /[ms]/); split($2, y, /[ms]/)
    printf "%.0f %.0f %.0f\n", e - s, u[1] * 60 + u[2], y[1] * 60 + y[2] }' "$tf" >"$out"
rm -f "$tf"
exit $rc
