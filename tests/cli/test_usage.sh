# Scheduler and controller metrics and GPU accounting with `corral up`:
# endpoints.json names the scheduler's and controller's /metrics, both
# answer /healthz and pass `promtool check metrics`; a short GPU pod binds
# (the scheduler's bind counter and latency histogram move), finishes, and
# leaves one UsageRecord (named by its UID, kubectl lists it) that `corral
# report usage` sums per queue, namespace and pod (table and JSON); a pod
# too big for the node shows as pending with reason category
# "Insufficient nvidia.com/gpu". UP_WAIT bounds every wait (seconds).
. tests/cli/lib.bash
. tests/cli/kube_lib.bash
UP_WAIT=${UP_WAIT:-30}
UP_PID=""
D=$TMP/d
cleanup() {
    if [ -n "$UP_PID" ]; then
        kill -INT "$UP_PID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$UP_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$UP_PID" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
if ! "$CORRAL" agent --help >/dev/null 2>&1; then
    echo "note: this build has no 'corral agent': skipped"
    exit 0
fi
PROMTOOL=$(command -v promtool || true)
PORT=$(free_port)
up_start "$UP_WAIT" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 1 --stop-timeout 5 \
    --ready-timeout "$UP_WAIT" || { fail "corral up did not come up"; finish; }
export KUBECONFIG=$D/kubeconfig
ep() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$D/endpoints.json" "$1"; }
SCHED=$(ep scheduler)
CTRL=$(ep controller)
[ "$(ep apiserver)" = "https://127.0.0.1:$PORT" ] || fail "endpoints.json apiserver: $(ep apiserver)"

# until SECONDS CMD...: retry CMD every 0.2 s until it succeeds.
metric() { curl -sf "$1/metrics" | grep -F -- "$2"; }

for u in "$SCHED" "$CTRL"; do
    until_ok "$UP_WAIT" curl -sf "$u/healthz" || fail "$u/healthz does not answer"
    expect_exit 0 curl -sf "$u/healthz"
    expect_out "ok"
done
until_ok "$UP_WAIT" metric "$SCHED" "corral_cluster_gpus_allocatable 8" ||
    fail "the scheduler does not see the node's 8 GPUs: $(curl -s "$SCHED/metrics" | grep gpus)"
expect_exit 0 curl -sf "$SCHED/metrics"
expect_out "corral_scheduler_leader 1"
expect_out "corral_scheduler_binds_total 0"

cat >"$TMP/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: acct
  annotations: {corral.dev/sim-utilization: "50"}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "sleep 1"]
    resources: {limits: {nvidia.com/gpu: 2}}
YAML
sed -e 's/name: acct/name: huge/' -e 's/gpu: 2/gpu: 16/' "$TMP/pod.yaml" >"$TMP/huge.yaml"
expect_exit 0 "$CORRAL" apply -f "$TMP/pod.yaml"
expect_exit 0 "$CORRAL" apply -f "$TMP/huge.yaml"
UID_=$("$CORRAL" get pod acct -o jsonpath='{.metadata.uid}' 2>/dev/null ||
    "$CORRAL" get pod acct -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')
until_ok "$UP_WAIT" metric "$SCHED" "corral_scheduler_binds_total 1" || fail "no bind counted"
expect_exit 0 curl -sf "$SCHED/metrics"
expect_out "corral_scheduler_e2e_scheduling_duration_seconds_count 1"
until_ok "$UP_WAIT" metric "$SCHED" \
    'corral_scheduler_pending_pods{queue="default",reason="Insufficient nvidia.com/gpu"} 1' ||
    fail "the big pod is not pending by category: $(curl -s "$SCHED/metrics" | grep pending_pods)"
expect_out 'corral_queue_deserved{queue="default",resource="nvidia.com/gpu"}'

# The finished pod's record, named by its UID, listed by corral and kubectl.
until_ok "$UP_WAIT" "$CORRAL" get usagerecord "$UID_" || fail "no UsageRecord $UID_"
expect_exit 0 "$CORRAL" get usagerecords -o json
expect_out '"pod": "acct"'
expect_out '"phase": "Succeeded"'
expect_out '"gpuSecondsAllocated"'
expect_out '"gpuIDs"'
expect_exit 0 "$CORRAL" get ur
expect_out "Succeeded"
find_kubectl
expect_exit 0 "$KUBECTL" get usagerecords.corral.dev -o name
expect_out "usagerecord.corral.dev/$UID_"
until_ok "$UP_WAIT" metric "$CTRL" "corral_usage_records_written_total 1" || fail "controller: no record counted"

expect_exit 0 "$CORRAL" report usage --since 1h
expect_out "QUEUE"
expect_out "EFFICIENCY"
printf '%s\n' "$OUT" | grep -qE '^default +1 ' || fail "report: no default row with 1 pod: $OUT"
printf '%s\n' "$OUT" | grep -qE '^TOTAL +1 ' || fail "report: no TOTAL row: $OUT"
expect_exit 0 "$CORRAL" report usage --by pod -o json
printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
g = r["groups"]
assert r["by"] == "pod" and len(g) == 1 and g[0]["key"] == "default/acct", r
assert g[0]["pods"] == 1 and g[0]["failed"] == 0 and g[0]["gpuHoursAllocated"] > 0, r
' || fail "report JSON: $OUT"
expect_exit 0 "$CORRAL" report usage --by namespace
expect_out "NAMESPACE"
expect_exit 2 "$CORRAL" report usage --by user
expect_exit 2 "$CORRAL" report usage --since soon

# A restarted controller lists the records first: the finished pod it finds
# again is not posted a second time.
CPID=$(pgrep -f "corral controller .*$D/" | head -1)
if [ -n "$CPID" ]; then
    kill -TERM "$CPID"
    until_ok "$UP_WAIT" sh -c "! kill -0 $CPID" || fail "the controller did not stop"
    until_ok "$((UP_WAIT * 2))" metric "$CTRL" "corral_usage_records 1" ||
        fail "the restarted controller did not list the records"
    expect_exit 0 curl -sf "$CTRL/metrics"
    printf '%s\n' "$OUT" | grep -q '^corral_usage_records_existing_total [1-9]' &&
        fail "the restarted controller posted a recorded pod again: $OUT"
    printf '%s\n' "$OUT" | grep -q '^corral_usage_records_written_total [1-9]' &&
        fail "the restarted controller wrote a record again: $OUT"
else
    fail "no controller process of this corral up"
fi

# Every exposition passes promtool.
if [ -n "$PROMTOOL" ]; then
    for u in "$SCHED" "$CTRL"; do
        curl -sf "$u/metrics" >"$TMP/m.prom" || fail "$u/metrics"
        expect_exit 0 "$PROMTOOL" check metrics <"$TMP/m.prom"
    done
else
    echo "note: no promtool: exposition checks skipped"
fi
finish
