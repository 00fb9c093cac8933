#!/bin/bash
# The inference router against Debian's nginx as a reverse proxy, side by
# side in one run, in front of the same backend (docs/benchmarks.md).
#
#   backend: an nginx (one worker) answering a fixed 64-byte body on its own
#            loopback address, as a replica would (pod IP 127.x.y.z);
#   nginx:   a second nginx (one worker: the router is one event loop)
#            proxying to it, proxy_http_version 1.1 with a keepalive upstream;
#   corral:  `corral router` (after `corral apiserver` and a hand-made
#            InferenceService whose traffic names a revision with one Ready
#            pod at the backend's address), through /serving/bench/llm/.
# wrk (keep-alive, CONNS connections, one thread) drives each of direct,
# nginx and corral for DURATION seconds, ROUNDS times in turn; each round
# prints requests/s and latency p50/p99, then the medians and the latency
# each proxy adds over going to the backend directly.
#
# usage: bench/router_bench.sh [DURATION] [CONNS] [ROUNDS]   (defaults 10 50 3)
# needs: tools/deps.sh bench (nginx, wrk), python3, build/corral
set -u
DUR=${1:-10}
CONNS=${2:-50}
ROUNDS=${3:-3}
CORRAL=${CORRAL:-build/corral}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    for f in "$TMP"/nginx-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
    sleep 0.3
    rm -rf "$TMP"
}
trap cleanup EXIT
for t in nginx wrk python3 curl; do
    command -v $t >/dev/null || [ -x /usr/sbin/$t ] || { echo "router_bench: $t missing (tools/deps.sh bench)"; exit 77; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

BIP=127.0.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1))
BPORT=$(free_port)
NPORT=$(free_port)
RPORT=$(free_port)
MPORT=$(free_port)

# nginx NAME SERVER_BLOCK [HTTP_EXTRA]: one worker, no logs, in the foreground.
nginx_start() {
    mkdir -p "$TMP/$1"
    cat >"$TMP/$1/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx-$1.pid;
error_log $TMP/$1/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $TMP/$1;
    proxy_temp_path $TMP/$1;
    fastcgi_temp_path $TMP/$1;
    uwsgi_temp_path $TMP/$1;
    scgi_temp_path $TMP/$1;
    keepalive_requests 1000000;
    ${3:-}
    server { $2 }
}
EOF
    "$NGINX" -p "$TMP/$1" -c "$TMP/$1/nginx.conf" &
    PIDS+=($!)
}
nginx_start backend "listen $BIP:$BPORT; location / { default_type text/plain; return 200 '0123456789abcdef0123456789abcdef0123456789abcdef012345678901234\n'; }"
nginx_start proxy "listen 127.0.0.1:$NPORT; location / { proxy_pass http://be; proxy_http_version 1.1; proxy_set_header Connection \"\"; }" \
    "upstream be { server $BIP:$BPORT; keepalive 64; }"

"$CORRAL" apiserver --data-dir "$TMP/api" --listen 127.0.0.1:0 2>"$TMP/api.log" &
PIDS+=($!)
API=""
for _ in $(seq 1 100); do
    P=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/api.log")
    [ -n "$P" ] && API=http://127.0.0.1:$P && break
    sleep 0.1
done
[ -n "$API" ] || { echo "router_bench: the API server did not start"; cat "$TMP/api.log"; exit 1; }
req() { curl -sf -o /dev/null -X "$1" -H "Content-Type: ${4:-application/json}" --data-binary "$3" "$API$2"; }
req POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}' || true
req POST /apis/serving.kserve.io/v1beta1/namespaces/bench/inferenceservices \
    "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\",\"metadata\":{\"name\":\"llm\"},\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"m\",\"image\":\"x\",\"ports\":[{\"containerPort\":$BPORT}]}]}}}"
req PATCH /apis/serving.kserve.io/v1beta1/namespaces/bench/inferenceservices/llm/status \
    '{"status":{"components":{"predictor":{"traffic":[{"revisionName":"llm-predictor-00001","percent":100,"latestRevision":true}]}}}}' application/merge-patch+json
req POST /api/v1/namespaces/bench/pods \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-a\",\"labels\":{\"serving.kserve.io/inferenceservice\":\"llm\",\"corral.dev/revision\":\"llm-predictor-00001\"}},\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"x\",\"ports\":[{\"containerPort\":$BPORT}]}]}}"
req PATCH /api/v1/namespaces/bench/pods/llm-a/status \
    "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$BIP\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}" application/merge-patch+json
"$CORRAL" router --server "$API" --listen "127.0.0.1:$RPORT" --metrics-listen "127.0.0.1:$MPORT" -q &
ROUTER=$!
PIDS+=($ROUTER)

DIRECT=http://$BIP:$BPORT/v1/completions
VIA_NGINX=http://127.0.0.1:$NPORT/v1/completions
VIA_CORRAL=http://127.0.0.1:$RPORT/serving/bench/llm/v1/completions
for u in "$DIRECT" "$VIA_NGINX" "$VIA_CORRAL"; do
    ok=""
    for _ in $(seq 1 100); do curl -sf -o /dev/null "$u" && ok=1 && break; sleep 0.1; done
    [ -n "$ok" ] || { echo "router_bench: $u does not answer"; exit 1; }
done

# cpu PID: CPU seconds (user + system) of the process so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"; }
# The process doing the proxying: nginx's worker, or the router.
NGINX_WORKER=$(pgrep -P "$(cat "$TMP/nginx-proxy.pid")" | head -1)
BACKEND_WORKER=$(pgrep -P "$(cat "$TMP/nginx-backend.pid")" | head -1)

# run NAME URL PID: one wrk run; prints "rps p50_us p99_us non2xx cpu_us_per_request" (the
# CPU of PID, the proxy, per request).
run() {
    local c0 c1
    c0=$(cpu "$3")
    wrk -t1 -c"$CONNS" -d"${DUR}s" --latency "$2" >"$TMP/wrk.$1" 2>&1
    c1=$(cpu "$3")
    echo "cpu $c0 $c1" >>"$TMP/wrk.$1"
    awk '
        function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1e6; return v }
        /^ *50%/ { p50 = us($2) } /^ *99%/ { p99 = us($2) } /^Requests\/sec/ { rps = $2 }
        /Non-2xx/ { bad = $NF } /requests in/ { n = $1 } /^cpu / { c = $3 - $2 }
        END { printf "%.0f %.0f %.0f %s %.1f\n", rps, p50, p99, bad ? bad : 0, n ? c * 1e6 / n : 0 }' "$TMP/wrk.$1"
}

echo "router_bench: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "router_bench: wrk -t1 -c$CONNS -d${DUR}s, $ROUNDS rounds; nginx $("$NGINX" -v 2>&1 | sed 's/.*\///'), one worker each"
printf "%-6s %-7s %10s %9s %9s %6s %12s\n" round target req/s p50_us p99_us non2xx cpu_us/req
for r in $(seq 1 "$ROUNDS"); do
    for t in direct nginx corral; do
        case $t in
        direct) u=$DIRECT p=$BACKEND_WORKER ;;
        nginx) u=$VIA_NGINX p=$NGINX_WORKER ;;
        corral) u=$VIA_CORRAL p=$ROUTER ;;
        esac
        read -r rps p50 p99 bad cpr < <(run "$t" "$u" "$p")
        printf "%-6s %-7s %10s %9s %9s %6s %12s\n" "$r" "$t" "$rps" "$p50" "$p99" "$bad" "$cpr"
        echo "$t $rps $p50 $p99 $cpr" >>"$TMP/results"
    done
done
echo
python3 - "$TMP/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    t, rps, p50, p99, cpr = line.split()
    rows.setdefault(t, []).append((float(rps), float(p50), float(p99), float(cpr)))
med = {t: [statistics.median(x[i] for x in v) for i in range(4)] for t, v in rows.items()}
d = med["direct"]
print("%-7s %10s %9s %9s %12s %12s %12s" % ("median", "req/s", "p50_us", "p99_us", "added_p50",
                                            "added_p99", "cpu_us/req"))
for t in ("direct", "nginx", "corral"):
    m = med[t]
    print("%-7s %10.0f %9.0f %9.0f %12.0f %12.0f %12.1f" % (t, m[0], m[1], m[2], m[1] - d[1],
                                                          m[2] - d[2], m[3]))
c, n = med["corral"], med["nginx"]
print("corral/nginx requests/s: %.2f; corral added p99: %.0f us (goal: >= 1.00 and <= 1000 us)"
      % (c[0] / n[0], c[2] - d[2]))
EOF
