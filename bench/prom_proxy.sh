#!/bin/bash
# The API server's CPU while a real Prometheus scrapes N hollow nodes through
# its node proxy (/api/v1/nodes/NODE/proxy/metrics) every second.
#
# `corral up --sim-nodes 0 --hollow-nodes N` (each hollow node serves the
# DCGM exposition of 8 simulated GPUs), then two phases of DURATION seconds:
#   idle:    no Prometheus (heartbeats, leases: the baseline);
#   scraped: Debian's prometheus, configured by
#            deploy/prometheus/corral-up-config.py, scrape interval 1 s.
# The API server's CPU seconds (utime + stime of /proc/PID/stat) are read
# before and after each phase; the scraped phase starts once every node
# target is up. Prints one line per phase and the per-scrape cost.
#
# usage: bench/prom_proxy.sh [NODES] [DURATION]   (defaults 100 60)
set -u
NODES=${1:-100}
DUR=${2:-60}
CORRAL=${CORRAL:-build/corral}
TMP=$(mktemp -d)
D=$TMP/d
UP_PID=""
PROM_PID=""
cleanup() {
    [ -n "$PROM_PID" ] && kill -KILL "$PROM_PID" 2>/dev/null
    [ -n "$UP_PID" ] && kill -KILL "$UP_PID" 2>/dev/null
    for p in $(pgrep -f -- "$D/"); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# cpu PID: CPU seconds (user + system) of the process so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"; }

PORT=$(free_port)
"$CORRAL" up --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 0 --hollow-nodes "$NODES" \
    --stop-timeout 5 --ready-timeout 60 >"$TMP/up.out" 2>"$TMP/up.err" &
UP_PID=$!
for _ in $(seq 1 600); do grep -q "Corral is up" "$TMP/up.out" && break; sleep 0.1; done
grep -q "Corral is up" "$TMP/up.out" || { cat "$TMP/up.err"; exit 1; }
API=$(pgrep -f -- "corral apiserver --data-dir $D/" | head -1)
[ -n "$API" ] || { echo "no API server process"; exit 1; }
K() { curl -s --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $(grep ',admin,' "$D/tokens.csv" | cut -d, -f1)" "https://127.0.0.1:$PORT$1"; }
for _ in $(seq 1 120); do
    n=$(K /api/v1/nodes | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("items", [])))' 2>/dev/null)
    [ "${n:-0}" -ge "$NODES" ] && break
    sleep 1
done
echo "nodes registered: $n (apiserver pid $API)"

c0=$(cpu "$API")
sleep "$DUR"
c1=$(cpu "$API")
idle=$(echo "$c1 - $c0" | bc)
echo "idle:    apiserver CPU $idle s in $DUR s"

mkdir -p "$TMP/prom"
/usr/bin/python3 deploy/prometheus/corral-up-config.py --data-dir "$D" --out "$TMP/prom/prometheus.yml" \
    --scrape-interval 1s || exit 1
PP=$(free_port)
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
    --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$TMP/prom/log" 2>&1 &
PROM_PID=$!
q() { curl -s "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")' 2>/dev/null; }
for _ in $(seq 1 120); do
    [ "$(q 'sum(up{job="corral-nodes"})')" = "$NODES" ] && break
    sleep 1
done
echo "node targets up: $(q 'sum(up{job="corral-nodes"})') of $(q 'count(up{job="corral-nodes"})')"
s0=$(q 'sum(scrape_samples_scraped{job="corral-nodes"})')
c0=$(cpu "$API")
t0=$(date +%s.%N)
sleep "$DUR"
c1=$(cpu "$API")
t1=$(date +%s.%N)
scrapes=$(q "sum(count_over_time(up{job=\"corral-nodes\"}[${DUR}s]))" "$t1")
ok=$(q "sum(sum_over_time(up{job=\"corral-nodes\"}[${DUR}s]))" "$t1")
dur=$(q "avg(avg_over_time(scrape_duration_seconds{job=\"corral-nodes\"}[${DUR}s]))" "$t1")
used=$(echo "$c1 - $c0" | bc)
wall=$(echo "$t1 - $t0" | bc)
echo "scraped: apiserver CPU $used s in $(printf %.1f "$wall") s; $ok of $scrapes node scrapes succeeded," \
    "$s0 samples per round, mean scrape $(python3 -c "print(f'{float(\"$dur\")*1000:.1f}')") ms"
python3 -c "
used, idle, dur, scrapes, wall = $used, $idle, $DUR, float('$scrapes'), $wall
extra = used - idle * wall / dur
print(f'=> {used / wall * 100:.1f}% of one core while scraped ({idle / dur * 100:.1f}% idle);'
      f' {extra / scrapes * 1e6:.0f} us of API server CPU per proxied scrape above idle')"
kill -TERM "$PROM_PID" && wait "$PROM_PID" 2>/dev/null
PROM_PID=""
kill -TERM "$UP_PID" && wait "$UP_PID" 2>/dev/null
UP_PID=""
