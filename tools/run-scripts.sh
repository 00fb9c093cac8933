#!/bin/bash
# Run each test script (isolated process, timeout) and record counts.
# A script passes with exit 0, is skipped with exit 77 (automake's convention).
#
# Scripts run SCRIPT_JOBS at a time (default 3; 1 runs them one by one): they
# mostly wait on the servers they start, and each has its own temp dir and
# free ports (tests/cli/lib.bash), so they do not see each other. The largest
# start first (size stands in for length), so that a long one does not start
# last. A script that measures how fast a server answers under load says
# so with a line `# run-scripts: alone`: those run at the end, one by one,
# with no other script beside them. Each line gives the script's wall and
# CPU seconds (its processes, children included), in the order they end.
# usage: tools/run-scripts.sh RESULT SCRIPT...
set -u
result=$1
shift
jobs=${SCRIPT_JOBS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scripts=() alone=()
while read -r _ t; do
    if grep -q '^# run-scripts: alone' "$t"; then alone+=("$t"); else scripts+=("$t"); fi
done < <(for t in "$@"; do [ -f "$t" ] && echo "$(wc -c <"$t") $t"; done | sort -s -k1,1 -rn)
first_alone=${#scripts[@]}
scripts+=("${alone[@]}")

# run I SCRIPT: one script, its output in $work/I.log, "rc wall cpu" in $work/I.rc.
run() {
    local t0=$SECONDS
    timeout "${SCRIPT_TIMEOUT:-300}" bash "$2" >"$work/$1.log" 2>&1
    local rc=$?
    # children's user and system time, as `times` prints them: 0m1.250s 0m0.310s
    # (here, not in a pipe: a forked `times` would count nothing)
    times >"$work/$1.times"
    local cpu
    cpu=$(tail -1 "$work/$1.times" | awk '{ n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%.1f", n }')
    echo "$rc $((SECONDS - t0)) $cpu" >"$work/$1.rc.tmp" && mv "$work/$1.rc.tmp" "$work/$1.rc"
}

pass=0 fail=0 skip=0 done_=0 next=0 running=0
# report I: print one finished script's line (and a failure's log).
report() {
    local i=$1 t=${scripts[$1]} rc took cpu
    read -r rc took cpu <"$work/$i.rc"
    local when="$took s, cpu $cpu s"
    case $rc in
    0) pass=$((pass + 1)); echo "[PASS] $t ($when)" ;;
    77) skip=$((skip + 1)); echo "[SKIP] $t ($when): $(tail -1 "$work/$i.log")" ;;
    *) fail=$((fail + 1)); echo "[FAIL] $t (exit $rc, $when)"; sed 's/^/    /' "$work/$i.log" | tail -40 ;;
    esac
    rm -f "$work/$i.rc" "$work/$i.log" "$work/$i.times"
    done_=$((done_ + 1))
}
reported=()
while [ "$done_" -lt "${#scripts[@]}" ]; do
    while [ "$running" -lt "$jobs" ] && [ "$next" -lt "${#scripts[@]}" ]; do
        # (the alone ones: only when nothing else runs, and nothing beside them)
        [ "$next" -ge "$first_alone" ] && [ "$running" -gt 0 ] && break
        run "$next" "${scripts[$next]}" &
        next=$((next + 1)) running=$((running + 1))
        [ "$next" -gt "$first_alone" ] && break
    done
    wait -n
    lost=$([ -z "$(jobs -pr)" ] && echo 1)
    for ((i = 0; i < next; i++)); do
        # (a run that died without its status counts as failed)
        [ -n "$lost" ] && [ -z "${reported[$i]:-}" ] && [ ! -f "$work/$i.rc" ] && echo "1 ? ?" >"$work/$i.rc"
        if [ -z "${reported[$i]:-}" ] && [ -f "$work/$i.rc" ]; then
            reported[$i]=1
            running=$((running - 1))
            report "$i"
        fi
    done
done
echo "$pass $fail $skip" >"$result"
[ $fail -eq 0 ]
