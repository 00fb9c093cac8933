#!/usr/bin/env bash
# `kubectl top nodes|pods` (the system's kubectl 1.32 and Debian's 1.20) and
# `corral top nodes|pods|gpus` against `corral apiserver` over HTTPS with a
# token file, with a fake node agent (a small Python HTTP server) serving
# kubelet's /metrics/resource with a CPU counter that grows 0.5 s per
# second of sample time, and a DCGM /metrics; and `promtool check metrics`
# on the API server's own /metrics.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
AGENT_PID=""
trap 'stop_server; [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

cat >"$TMP/agent.py" <<'PY'
import http.server, sys
n = [0]
DCGM = ('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",device="nvidia0",modelName="NVIDIA H100",'
        'Hostname="n1",container="main",namespace="default",pod="p"} 85\n'
        'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",modelName="NVIDIA H100",namespace="default",pod="p",container="main"} 1024\n'
        'DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100",namespace="default",pod="p",container="main"} 80000\n'
        'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100",namespace="default",pod="p",container="main"} 312.5\n'
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",modelName="NVIDIA H100",namespace="default",pod="p",container="main"} 61\n')
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path == '/metrics/resource':
            n[0] += 1
            ts = 1700000000000 + n[0] * 1000
            body = ('node_cpu_usage_seconds_total %.3f %d\nnode_memory_working_set_bytes 2147483648 %d\n'
                    'container_cpu_usage_seconds_total{container="main",namespace="default",pod="p"} %.3f %d\n'
                    'container_memory_working_set_bytes{container="main",namespace="default",pod="p"} 104857600 %d\n'
                    % (n[0] * 0.5, ts, ts, n[0] * 0.25, ts, ts))
        elif self.path == '/metrics':
            body = DCGM
        else:
            self.send_response(404); self.end_headers(); return
        b = body.encode()
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
        self.send_header('Content-Length', str(len(b)))
        self.end_headers()
        self.wfile.write(b)
s = http.server.HTTPServer(('127.0.0.1', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$TMP/agent.py" >"$TMP/agent.port" &
AGENT_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/agent.port" ] && break; sleep 0.05; done
APORT=$(cat "$TMP/agent.port")

make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem" --metrics-resolution 200ms
write_kubeconfig "$TMP/admin.kubeconfig" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
write_kubeconfig "$TMP/alice.kubeconfig" "https://127.0.0.1:$PORT" alice-token-0123456789 "$TMP/cert.pem"
C() { "$CORRAL" "$1" --kubeconfig "$TMP/admin.kubeconfig" "${@:2}"; }
CURL() { curl -sS --cacert "$TMP/cert.pem" -H "Authorization: Bearer admin-token-0123456789" "$@"; }

cat >"$TMP/objs.json" <<JSON
{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},
 "status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}],
 "conditions":[{"type":"Ready","status":"True"}],
 "capacity":{"cpu":"4","memory":"8Gi","nvidia.com/gpu":"8"},
 "allocatable":{"cpu":"4","memory":"8Gi","nvidia.com/gpu":"8"},
 "daemonEndpoints":{"kubeletEndpoint":{"Port":$APORT}}}},
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
 "spec":{"nodeName":"n1","containers":[{"name":"main","image":"x",
 "resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}]}
JSON
CURL -X POST -H 'Content-Type: application/json' "https://127.0.0.1:$PORT/api/v1/nodes" \
    -d "$(python3 -c 'import json,sys;print(json.dumps(json.load(open(sys.argv[1]))["items"][0]))' "$TMP/objs.json")" >/dev/null
CURL -X POST -H 'Content-Type: application/json' "https://127.0.0.1:$PORT/api/v1/namespaces/default/pods" \
    -d "$(python3 -c 'import json,sys;print(json.dumps(json.load(open(sys.argv[1]))["items"][1]))' "$TMP/objs.json")" >/dev/null

# Wait for two scrapes (a rate needs two samples).
for _ in $(seq 1 100); do
    CURL "https://127.0.0.1:$PORT/apis/metrics.k8s.io/v1beta1/namespaces/default/pods" | grep -q '"name":"p"' && break
    sleep 0.1
done

for KUBECTL in /usr/bin/kubectl build/deps/kubernetes-client/usr/bin/kubectl; do
    [ -x "$KUBECTL" ] || { echo "skip: no $KUBECTL"; continue; }
    K() { "$KUBECTL" --kubeconfig "$TMP/admin.kubeconfig" --request-timeout=20s "$@"; }
    expect_exit 0 K top nodes
    expect_out "n1"
    expect_out "500m"
    expect_out "12%" # 500m of 4 cores
    expect_out "2048Mi"
    expect_exit 0 K top pods
    expect_out "p "
    expect_out "250m"
    expect_out "100Mi"
    expect_exit 0 K top pods -A
    expect_out "default"
    # alice may not read metrics.k8s.io
    expect_exit 1 "$KUBECTL" --kubeconfig "$TMP/alice.kubeconfig" top nodes
done

# The Python client reads metrics.k8s.io as scripts do (a custom object).
find_python_client
expect_exit 0 timeout 60 "$PYTHON" -c '
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
api = client.CustomObjectsApi()
nodes = api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
n1 = [n for n in nodes["items"] if n["metadata"]["name"] == "n1"][0]
assert n1["usage"]["cpu"].endswith("n") and n1["usage"]["memory"].endswith("Ki"), n1
pods = api.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods")
p = [x for x in pods["items"] if x["metadata"]["name"] == "p"][0]
print(n1["usage"]["cpu"], p["containers"][0]["usage"]["memory"])
' "$TMP/admin.kubeconfig"
expect_out "500000000n"

expect_exit 0 C top nodes
expect_out "GPU-ALLOC"
printf '%s\n' "$OUT" | grep -Eq '^n1 +500m +12% +2048Mi +25% +8 +2$' || fail "corral top nodes: $OUT"
expect_exit 0 C top pods
printf '%s\n' "$OUT" | grep -Eq '^p +250m +100Mi +2$' || fail "corral top pods: $OUT"
expect_exit 0 C top gpus
printf '%s\n' "$OUT" | grep -Eq '^n1 +0 +NVIDIA H100 +85% +1024/81024 +312.5 +61 +default/p$' ||
    fail "corral top gpus: $OUT"
expect_exit 2 C top things

# The node proxy and the API server's own /metrics, checked by promtool.
expect_exit 0 CURL -f "https://127.0.0.1:$PORT/api/v1/nodes/n1/proxy/metrics"
expect_out "DCGM_FI_DEV_GPU_UTIL"
CURL "https://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
grep -q '^apiserver_request_total{verb="GET"' "$TMP/metrics.txt" || fail "no apiserver_request_total"
if [ -x /usr/bin/promtool ]; then
    expect_exit 0 /usr/bin/promtool check metrics <"$TMP/metrics.txt"
else
    echo "skip: no promtool"
fi
finish
