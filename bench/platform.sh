#!/bin/bash
# The platform benchmarks of docs/benchmarks.md, each on a fresh `corral up`
# (API server over TLS with fsync, scheduler, controller, agents) on this
# machine, measured by build/bench/platform as a client:
#   throughput: 10,000 pods on 1,000 hollow nodes (create to bound, to Running)
#   latency:    create-to-Running of single pods on an idle cluster of 8
#               simulated nodes whose agents run real processes
#   stream:     1,000 jobs of 1/2/4/8 GPUs lasting 1 s on 4 hollow nodes x 8 GPUs
#   churn:      20,000 pods created and deleted in rounds of 1,000 on 100
#               hollow nodes; resident memory of every component per round
# usage: bench/platform.sh [throughput|latency|stream|churn]... (default: the first three)
set -u
cd "$(dirname "$0")/.."
make -s build/corral build/bench/platform || exit 1
WORK=$(mktemp -d)
UP_PID=""
trap '[ -n "$UP_PID" ] && kill -INT $UP_PID 2>/dev/null; wait; rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# up NAME ARGS...: a fresh corral up; sets SERVER and TOKEN.
up() {
    local d=$WORK/$1
    shift
    build/corral up --data-dir "$d" --listen "127.0.0.1:$PORT" --stop-timeout 5 "$@" \
        >"$d.out" 2>&1 &
    UP_PID=$!
    for _ in $(seq 1 600); do
        grep -q "Corral is up" "$d.out" 2>/dev/null && break
        sleep 0.1
    done
    SERVER=https://127.0.0.1:$PORT
    TOKEN=$(awk -F, '$2 == "admin" { print $1 }' "$d/tokens.csv")
}

down() {
    kill -INT "$UP_PID"
    wait "$UP_PID"
    UP_PID=""
}

modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(throughput latency stream)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git rev-parse --short HEAD)"
for m in "${modes[@]}"; do
    case $m in
    throughput)
        up tp --sim-nodes 0 --hollow-nodes 1000
        sleep 5
        build/bench/platform throughput --server "$SERVER" --token "$TOKEN" -n 10000 -c 8
        down ;;
    latency)
        up lat --sim-nodes 8
        sleep 3
        build/bench/platform latency --server "$SERVER" --token "$TOKEN" -n 200
        down ;;
    stream)
        up st --sim-nodes 0 --hollow-nodes 4
        sleep 3
        build/bench/platform stream --server "$SERVER" --token "$TOKEN" -n 1000 --gpus-total 32
        down ;;
    churn)
        up ch --sim-nodes 0 --hollow-nodes 100
        sleep 3
        pids=""
        for c in apiserver scheduler controller agent; do
            p=$(pgrep -f "corral $c .*$WORK/ch" | head -1)
            echo "  $c = pid $p"
            pids="$pids${pids:+,}$p"
        done
        build/bench/platform churn --server "$SERVER" --token "$TOKEN" -n "${CHURN_PODS:-20000}" -c 8 --pids "$pids"
        down ;;
    *) echo "unknown benchmark $m" >&2; exit 2 ;;
    esac
done
