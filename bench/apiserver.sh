#!/bin/bash
# The API server benchmark recorded in docs/benchmarks.md, on a fresh data
# directory each time:
#   1. durable creates/s, CLIENTS concurrent clients: corral apiserver, then
#      etcd (Debian's etcd-server, the store behind kube-apiserver) through
#      its v3 JSON gateway, with the same load generator and the same Pods;
#   2. WATCHERS watchers each receiving WRITES writes: delivery lag, as fast
#      as the writers go and at RATE writes/s;
#   3. listing LIST pods (the creates of step 1, topped up).
# usage: bench/apiserver.sh   (env: CLIENTS=16 CREATES=20000 WATCHERS=100
#        WRITES=10000 RATE=2000 LIST=100000)
set -eu
lg=${LOADGEN:-build/bench/loadgen}
corral=${CORRAL:-build/corral}
clients=${CLIENTS:-16}
creates=${CREATES:-20000}
watchers=${WATCHERS:-100}
writes=${WRITES:-10000}
rate=${RATE:-2000}
list=${LIST:-100000}
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || true

start_corral() {
    "$corral" apiserver --data-dir "$tmp/$1" --listen 127.0.0.1:0 2>"$tmp/$1.log" &
    pids+=($!)
    for _ in $(seq 1 100); do
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$1.log")
        [ -n "$port" ] && break
        sleep 0.05
    done
    url=http://127.0.0.1:$port
}

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "== 1. durable creates, $clients clients"
start_corral c1
"$lg" create --url "$url" -c "$clients" -n "$creates"
if command -v etcd >/dev/null; then
    eport=${ETCD_PORT:-23790}
    etcd --data-dir "$tmp/etcd" --listen-client-urls "http://127.0.0.1:$eport" \
        --advertise-client-urls "http://127.0.0.1:$eport" \
        --listen-peer-urls "http://127.0.0.1:$((eport + 10))" \
        --initial-advertise-peer-urls "http://127.0.0.1:$((eport + 10))" \
        --initial-cluster "default=http://127.0.0.1:$((eport + 10))" \
        --quota-backend-bytes 8589934592 >"$tmp/etcd.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$eport/health" >/dev/null && break
        sleep 0.1
    done
    echo "   etcd $(etcd --version | head -1 | awk '{print $3}')"
    "$lg" create --url "http://127.0.0.1:$eport" --target etcd -c "$clients" -n "$creates"
else
    echo "   etcd not installed (tools/deps.sh bench installs etcd-server)"
fi

echo "== 2. $watchers watchers x $writes writes"
start_corral c2
"$lg" watch --url "$url" -w "$watchers" -n "$writes" -c "$clients" --name-prefix fast-
"$lg" watch --url "$url" -w "$watchers" -n "$writes" -c "$clients" --rate "$rate" --name-prefix paced-

echo "== 3. list $list pods"
start_corral c3
"$lg" create --url "$url" -c "$clients" -n "$list" --name-prefix p- >/dev/null
"$lg" list --url "$url" --path /api/v1/pods --repeat 5
"$lg" list --url "$url" --path "/api/v1/pods?labelSelector=team%3Dml" --repeat 3
"$lg" list --url "$url" --path "/api/v1/namespaces/default/pods?limit=500" --repeat 3
