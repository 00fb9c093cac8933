# A real Prometheus (Debian's) scraping `corral up` with two simulated nodes,
# configured by deploy/prometheus/corral-up-config.py (the relabeling of
# deploy/prometheus/prometheus.yml: agents through the API server's node
# proxy), scraping every second. Through its HTTP query API:
#   - every target is up: the API server, each node's agent through
#     /api/v1/nodes/NODE/proxy/metrics, the scheduler and the controller
#     (addresses from DATA_DIR/endpoints.json);
#   - DCGM_FI_DEV_GPU_UTIL has one series per GPU (16) with the labels gpu,
#     UUID, modelName, Hostname; idle GPUs are at 0;
#   - a pod annotated corral.dev/sim-utilization: "85" puts its GPU's series
#     at 85 with its namespace and pod labels, and back to 0 after it ends;
#   - the scheduler's series (queue allocated GPUs, pending pods by queue and
#     reason) carry queue labels and follow the pod and a pending pod;
#   - every query of the Grafana dashboards runs without error, and every
#     metric they name exists (but DCGM's profiling field, which Corral's
#     agent does not export);
#   - `promtool check metrics` accepts every exposition (the only lint
#     findings allowed are on dcgm-exporter's own names: its counters have
#     no _total suffix and its label modelName is camelCase).
# Waits are bounded by PROM_WAIT seconds each.
. tests/cli/lib.bash
. tests/cli/kube_lib.bash
W=${PROM_WAIT:-60}
UP_PID=""
PROM_PID=""
D=$TMP/d
PY=/usr/bin/python3

cleanup() {
    [ -n "$PROM_PID" ] && kill -KILL "$PROM_PID" 2>/dev/null
    [ -n "$UP_PID" ] && kill -KILL "$UP_PID" 2>/dev/null
    for p in $(pgrep -f -- "$D/"); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
    { echo "prometheus is not installed (Debian prometheus)"; exit 77; }
"$CORRAL" agent --help >/dev/null 2>&1 || { echo "this build has no corral agent"; exit 77; }
find_kubectl
PORT=$(free_port)
K() { "$KUBECTL" --kubeconfig "$D/kubeconfig" --request-timeout=10s "$@"; }
jp() { K get "$1" "$2" -o jsonpath="$3" 2>/dev/null; }

# wait_for DESC CMD...: retry CMD until it succeeds; fail after W seconds.
wait_for() {
    local desc=$1
    shift
    until_ok "$W" "$@" || { fail "timed out waiting for: $desc"; return 1; }
}

up_start "$W" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 2 --stop-timeout 5 \
    --ready-timeout "$W" --extra-config agent.heartbeat-seconds=1 || exit 1
ready_nodes() { [ "$(K get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" -eq 2 ]; }
wait_for "two Ready nodes" ready_nodes || exit 1
# A queue with a capability (the default queue has none).
K apply -f - >/dev/null <<'EOF' || fail "creating queue capped"
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: capped}
spec: {weight: 1, capability: {nvidia.com/gpu: 4}}
EOF
# endpoints.json names the scheduler's and controller's metrics addresses.
has_endpoints() { "$PY" -c 'import json,sys; e=json.load(open(sys.argv[1])); sys.exit(not (e.get("scheduler") and e.get("controller")))' "$D/endpoints.json"; }
wait_for "scheduler and controller in $D/endpoints.json" has_endpoints

# --- Prometheus, configured for this corral up
mkdir -p "$TMP/prom"
expect_exit 0 "$PY" deploy/prometheus/corral-up-config.py --data-dir "$D" --out "$TMP/prom/prometheus.yml" --scrape-interval 1s
# Prometheus scrapes as system:corral-metrics (deploy/rbac/metrics-reader.yaml), not as admin.
[ "$(cat "$TMP/prom/corral-token")" = "$(cat "$D/kubeconfigs/metrics.token")" ] ||
    fail "the generated configuration does not use the metrics reader's token"
expect_exit 0 promtool check config "$TMP/prom/prometheus.yml"
PPORT=$(free_port)
PROM=http://127.0.0.1:$PPORT
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
    --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMP/prom/log" 2>&1 &
PROM_PID=$!
wait_for "Prometheus ready" curl -sf "$PROM/-/ready" || { cat "$TMP/prom/log"; exit 1; }

# q EXPR: the instant query's result as JSON lines {"metric": {...}, "value": V};
# exit 1 when Prometheus answers an error.
q() {
    curl -s --max-time 10 "$PROM/api/v1/query" --data-urlencode "query=$1" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
if r.get("status") != "success":
    print(r.get("error"), file=sys.stderr); sys.exit(1)
res = r["data"]["result"]
if r["data"]["resultType"] == "scalar": res = [{"metric": {}, "value": res}]
for s in res: print(json.dumps({"metric": s["metric"], "value": float(s["value"][1])}))'
}
# val EXPR: the value of a query with one result ("none" for no result).
val() { local out; out=$(q "$1") || return 1; [ -z "$out" ] && { echo none; return 0; }
    printf '%s\n' "$out" | head -1 | "$PY" -c 'import json,sys; v=json.load(sys.stdin)["value"]; print(int(v) if v == int(v) else v)'; }
# is EXPR WANT: the query's value is WANT.
is() { [ "$(val "$1")" = "$2" ]; }

echo "--- every target is up"
targets() {
    curl -s --max-time 10 "$PROM/api/v1/targets" | "$PY" -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(t["labels"]["job"], t["labels"]["instance"], t["health"], t["scrapeUrl"], t["lastError"])'
}
all_up() { [ "$(targets | grep -c ' up ')" -eq 5 ]; }
wait_for "5 targets up" all_up || targets
OUT=$(targets)
for n in sim-node-0 sim-node-1; do
    expect_out "corral-nodes $n up https://127.0.0.1:$PORT/api/v1/nodes/$n/proxy/metrics"
done
expect_out "corral-apiserver 127.0.0.1:$PORT up"
expect_out "corral-scheduler"
expect_out "corral-controller"

echo "--- DCGM_FI_DEV_GPU_UTIL: one series per GPU, with the DCGM exporter's labels"
wait_for "16 GPU series" is 'count(DCGM_FI_DEV_GPU_UTIL{job="corral-nodes"})' 16
for l in gpu UUID modelName Hostname; do
    n=$(val "count(count by ($l, instance) (DCGM_FI_DEV_GPU_UTIL{$l!=\"\"}))")
    case $l in gpu) want=16 ;; UUID) want=16 ;; *) want=2 ;; esac
    [ "$n" = "$want" ] || fail "DCGM_FI_DEV_GPU_UTIL: $n distinct non-empty $l (by node), want $want"
done
is 'count(count by (UUID) (DCGM_FI_DEV_GPU_UTIL))' 16 || fail "GPU UUIDs are not distinct"
is 'max(DCGM_FI_DEV_GPU_UTIL)' 0 || fail "idle GPUs not at 0: $(q 'DCGM_FI_DEV_GPU_UTIL > 0')"
wait_for "queue capped's capability" is 'corral_queue_capability{queue="capped", resource="nvidia.com/gpu"}' 4
is 'sum(corral_queue_allocated{resource="nvidia.com/gpu"}) or vector(0)' 0 ||
    fail "GPUs allocated before any pod: $(q corral_queue_allocated)"

echo "--- a pod at 85% moves its GPU's series; back to 0 when it ends"
K apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: hot
  annotations: {corral.dev/sim-utilization: "85"}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "sleep 600"]
    resources: {limits: {nvidia.com/gpu: 1}}
EOF
wait_for "pod hot running" sh -c "[ \"\$($KUBECTL --kubeconfig $D/kubeconfig get pod hot -o jsonpath='{.status.phase}')\" = Running ]"
NODE=$(jp pod hot '{.spec.nodeName}')
G=$(jp pod hot '{.metadata.annotations.corral\.dev/gpu-ids}')
echo "hot runs on $NODE GPU $G"
SEL="instance=\"$NODE\", gpu=\"$G\""
# (one query for the value and the labels: the simulated value jitters by
# up to 3 every 5 s, so a second query may no longer see 85)
wait_for "GPU $G of $NODE at 85 with the pod's namespace and name" \
    is "DCGM_FI_DEV_GPU_UTIL{$SEL, namespace=\"default\", pod=\"hot\"}" 85 ||
    echo "GPU $G's series: $(q "DCGM_FI_DEV_GPU_UTIL{$SEL}")"
is 'count(DCGM_FI_DEV_GPU_UTIL > 0)' 1 || fail "other GPUs busy: $(q 'DCGM_FI_DEV_GPU_UTIL > 0')"
wait_for "1 GPU allocated to a queue" is 'sum(corral_queue_allocated{resource="nvidia.com/gpu"})' 1
is 'count(corral_queue_allocated{queue!="", resource="nvidia.com/gpu"} > 0)' 1 ||
    fail "corral_queue_allocated has no queue label: $(q corral_queue_allocated)"

echo "--- a pod that cannot fit is counted pending, by queue and reason"
K apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: toobig}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "sleep 600"]
    resources: {limits: {nvidia.com/gpu: 9}}
EOF
wait_for "1 pending pod" is 'sum(corral_scheduler_pending_pods)' 1
wait_for "its age" is 'count(corral_scheduler_pending_pod_oldest_seconds{queue!=""} >= 0)' 1
is 'count(corral_scheduler_pending_pods{queue!="", reason!=""} > 0)' 1 ||
    fail "pending pods without queue and reason: $(q corral_scheduler_pending_pods)"
K delete pod toobig hot --wait=false >/dev/null
wait_for "no pending pod" is 'sum(corral_scheduler_pending_pods) or vector(0)' 0
wait_for "no pending age" is 'count(corral_scheduler_pending_pod_oldest_seconds) or vector(0)' 0
wait_for "GPU $G of $NODE back to 0" is "DCGM_FI_DEV_GPU_UTIL{$SEL}" 0
is "count(DCGM_FI_DEV_GPU_UTIL{pod!=\"\"}) or vector(0)" 0 ||
    fail "a series still names a pod: $(q 'DCGM_FI_DEV_GPU_UTIL{pod!=""}')"
wait_for "no GPU allocated" is 'sum(corral_queue_allocated{resource="nvidia.com/gpu"}) or vector(0)' 0

echo "--- API server series"
n=$(val 'count(apiserver_request_total{verb!="", resource!=""})')
[ "$n" != none ] || fail "no apiserver_request_total with verb and resource labels"

echo "--- every dashboard query runs; every metric it names exists"
python3 tests/deploy/dashboards.py exprs deploy/grafana/*.json >"$TMP/exprs"
# One process for all of them: each query must run; each metric a query
# names must have had a series during this test (one the simulated GPUs
# cannot have, the tensor-core activity of NVIDIA's dashboard, aside).
"$PY" - "$PROM" "$TMP/exprs" <<'PYEOF' >"$TMP/dash.out" 2>&1 || fail "dashboards: $(cat "$TMP/dash.out")"
import json, re, sys, urllib.parse, urllib.request
prom, path = sys.argv[1], sys.argv[2]
def query(e):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": e})
    r = json.load(urllib.request.urlopen(url, timeout=10))
    if r.get("status") != "success":
        raise SystemExit("query errors: %s: %s" % (e, r.get("error")))
    return r["data"]["result"]
exprs = [json.loads(l) for l in open(path) if l.strip()]
for e in exprs:
    query(e)
if len(exprs) <= 40:
    raise SystemExit("only %d dashboard queries" % len(exprs))
names = sorted(set(re.findall(r"\b(DCGM_FI_[A-Z_]+|corral_[a-z0-9_]+|apiserver_[a-z0-9_]+)", "\n".join(exprs))))
for m in names:
    if m != "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" and not query('count(count_over_time({__name__="%s"}[10m]))' % m):
        raise SystemExit("dashboards name %s: no such series during this test" % m)
print(len(exprs), "queries,", len(names), "metrics")
PYEOF

echo "--- promtool check metrics accepts every exposition"
TOKEN=$(grep ',admin,' "$D/tokens.csv" | cut -d, -f1)
A=(--max-time 10 -sf --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $TOKEN")
# check_metrics NAME: stdin through promtool; rc 0, or rc 3 (lint findings)
# whose findings are all the DCGM exporter's own names: counters without
# _total, the camelCase label modelName.
DCGM_LINT='^DCGM_FI_[A-Z0-9_]+ (counter metrics should have "_total" suffix|label names should be written in .snake_case. not .camelCase.)$'
check_metrics() {
    local out rc
    cat >"$TMP/m.txt"
    [ -s "$TMP/m.txt" ] || { fail "$1: empty exposition"; return; }
    out=$(promtool check metrics <"$TMP/m.txt" 2>&1)
    rc=$?
    [ "$rc" = 0 ] && return
    if [ "$rc" = 3 ] && ! printf '%s\n' "$out" | grep -vqE "$DCGM_LINT"; then
        return
    fi
    fail "promtool check metrics, $1 (exit $rc): $out"
}
curl "${A[@]}" "https://127.0.0.1:$PORT/metrics" | check_metrics apiserver
for n in sim-node-0 sim-node-1; do
    curl "${A[@]}" "https://127.0.0.1:$PORT/api/v1/nodes/$n/proxy/metrics" | check_metrics "node $n (proxy)"
    curl "${A[@]}" "https://127.0.0.1:$PORT/api/v1/nodes/$n/proxy/metrics/resource" | check_metrics "node $n /metrics/resource"
done
for url in $("$PY" -c '
import json, sys
e = json.load(open(sys.argv[1]))
for k in ("scheduler", "controller"): print(e[k])' "$D/endpoints.json" 2>/dev/null); do
    curl --max-time 10 -sf "$url/metrics" | check_metrics "$url/metrics"
done

kill -TERM "$PROM_PID"
wait "$PROM_PID" 2>/dev/null
PROM_PID=""
kill -TERM "$UP_PID"
wait "$UP_PID"
rc=$?
UP_PID=""
[ "$rc" = 0 ] || fail "corral up exited $rc after SIGTERM"
finish
