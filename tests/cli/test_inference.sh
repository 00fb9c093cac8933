# needs: the whole of issue 13 (InferenceService controller, autoscaler,
# router, agent's model cache and pod addresses); skips until `corral
# router` exists.
#
# Elastic inference end to end, under `corral up` (two simulated nodes of
# one GPU each, the autoscaler's windows in seconds) with the stand-in model
# server from examples/inference/:
#  1. a service at zero gets a request through the router, scales to one and
#     answers it (the request waits, it is not lost);
#  2. a streaming response arrives token by token through the router (its
#     first token comes while the replica still counts the request running);
#  3. a load ramp (concurrent streaming clients) scales it to the GPU count,
#     the replica on the node that holds the model (LocalModelCache) starts
#     from the cache ("hit") while the other fetches it ("fetched"), no
#     request fails, and it goes back to zero when idle;
#  4. a 10% canary gets 10% +- 3% of 2,000 requests, then is rolled back
#     (canaryTrafficPercent 0: all to the previous revision) and promoted
#     (no canaryTrafficPercent: all to the new one).
# Order-based: every wait is bounded by W seconds, nothing asserts on how
# long a step took.
. tests/cli/lib.bash
if ! "$CORRAL" router --help >/dev/null 2>&1; then
    echo "skipped: no \`corral router\` in this build (needs the whole of issue 13)"
    exit 77
fi
KUBECTL=$(command -v kubectl || true)
[ -n "$KUBECTL" ] || { echo "skipped: no kubectl to read LocalModelCache status"; exit 77; }
W=${W:-40}
UP_PID=""
STOP=$TMP/stop-load
D=$TMP/d
cleanup() {
    touch "$STOP"
    [ -n "$UP_PID" ] && kill -INT "$UP_PID" 2>/dev/null && wait "$UP_PID"
    rm -rf "$TMP"
}
trap cleanup EXIT
export KUBECONFIG=$D/kubeconfig
C() { "$CORRAL" "$@"; }
K() { "$KUBECTL" --request-timeout=20s "$@"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# --- the platform: 2 nodes x 1 GPU, short autoscaler windows, the router ----------------------
cat >"$TMP/one-gpu.yaml" <<'EOF'
name: one-gpu
gpus: 1
model: NVIDIA L4
memoryMiB: 23034
computeCapability: "8.9"
cpu: 16
memory: 64Gi
topology:
  - X
EOF
PORT=$(free_port)
RPORT=$(free_port)
up_start "$W" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 2 \
    --sim-profile "$TMP/one-gpu.yaml" --router-listen "127.0.0.1:$RPORT" \
    --extra-config controller.autoscaler-stable-window=6s \
    --extra-config controller.autoscaler-panic-window=1s \
    --extra-config controller.scale-to-zero-grace=2s \
    --extra-config controller.autoscaler-tick=500ms \
    --stop-timeout 5 --ready-timeout "$W" || { fail "corral up did not come up"; finish; }
ROUTER=$(jq_ 'd["router"]' <"$D/endpoints.json")
[ "$ROUTER" = "http://127.0.0.1:$RPORT" ] || fail "endpoints.json router: $ROUTER"
U=$ROUTER/serving/default/llm/v1/completions
until_ok "$W" sh -c "\"$CORRAL\" get nodes --no-headers | grep -c ' Ready' | grep -qx 2" ||
    fail "two Ready nodes: $(C get nodes)"

# --- the model, cached on sim-node-0 only ----------------------------------------------------
examples/inference/make-demo-model.sh "$TMP/model" 32 >/dev/null
cat >"$TMP/cache.yaml" <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: inference}
spec: {weight: 1, reclaimable: false}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelNodeGroup
metadata: {name: node0}
spec:
  storageLimit: 1Gi
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: demo}
spec:
  sourceModelUri: file://$TMP/model
  modelSize: 32Mi
  nodeGroups: [node0]
EOF
expect_exit 0 C apply -f examples/inference/standin-runtime.yaml -f "$TMP/cache.yaml"
cached() { K get --raw /apis/serving.kserve.io/v1alpha1/localmodelcaches/demo |
    jq_ 'd.get("status",{}).get("copies",{}).get("available",0)' | grep -qx 1; }
until_ok "$W" cached || fail "the model is not cached on sim-node-0: $(K get localmodelcaches demo -o yaml)"

# service TOKEN_MS TARGET [CANARY]: the InferenceService. A new --token-ms
# makes a new revision. The canary phase targets 20 concurrent requests per
# replica so that each revision needs one of the two GPUs.
service() {
    cat <<EOF
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm, namespace: default}
spec:
  predictor:
    minReplicas: 0
    maxReplicas: 0
    scaleMetric: concurrency
    scaleTarget: $2
    ${3:+canaryTrafficPercent: $3}
    model:
      modelFormat: {name: standin}
      storageUri: file://$TMP/model
      args: [--token-ms, "$1"]
      resources: {limits: {nvidia.com/gpu: 1}}
EOF
}
# traffic: "revision=percent,..." of the status, the revisions with a share.
traffic() {
    C get isvc llm -o json | jq_ '",".join("%s=%s" % (t["revisionName"], t["percent"])
        for t in sorted(d["status"]["components"]["predictor"]["traffic"], key=lambda t: t["revisionName"])
        if t.get("percent"))' 2>/dev/null
}
pods_json() { C get pods -l serving.kserve.io/inferenceservice=llm -o json; }
count_ready() {
    pods_json | jq_ 'sum(1 for p in d["items"] if not p["metadata"].get("deletionTimestamp")
        and any(c["type"] == "Ready" and c["status"] == "True"
                for c in p.get("status", {}).get("conditions", [])))'
}
count_pods() { pods_json | jq_ 'len(d["items"])'; }
printf '#!/bin/bash\n"%s" get pod "$1" -o json | python3 -c "import json,sys; p=json.load(sys.stdin); print(\\"http://%%s:8000\\" %% p[\\"status\\"][\\"podIP\\"])"\n' \
    "$(realpath "$CORRAL")" >"$TMP/podurl"
chmod +x "$TMP/podurl"

# --- 1. from zero to one ----------------------------------------------------------------------
service 20 1 | C apply -f - >/dev/null || fail "apply the service"
first_rev() { [ "$(traffic)" = "llm-predictor-00001=100" ]; }
until_ok "$W" first_rev || fail "no traffic in the service's status: $(C get isvc llm -o yaml)"
zero() { [ "$(count_pods)" = 0 ]; }
until_ok "$W" zero || fail "the service did not settle at zero: $(C get pods)"
OUT=$(curl -sS -m "$W" "$U" -d '{"prompt": "hello", "max_tokens": 4}' -w '\n%{http_code}')
expect_out '"completion_tokens":4'
[ "$(printf '%s' "$OUT" | tail -1)" = 200 ] || fail "the request at zero: $OUT"
[ "$(count_ready)" -ge 1 ] || fail "answered without a ready replica?"
pods_json >"$TMP/first.json"

# --- 2. streaming through the router ------------------------------------------------------------
python3 tests/cli/infer_client.py stream "$U" 6 --metrics-of-pod "$TMP/podurl" >"$TMP/stream" 2>&1 ||
    fail "streaming through the router: $(cat "$TMP/stream")"

# --- 3. a load ramp: to the GPU count, the cache, back to zero ----------------------------------
python3 tests/cli/infer_client.py hold "$U" 6 "$STOP" --max-tokens 20 >"$TMP/hold" 2>&1 &
HOLD=$!
two() { [ "$(count_ready)" -ge 2 ]; }
until_ok "$W" two || fail "the ramp did not reach 2 ready replicas (the GPUs): $(C get pods -o wide)"
pods_json >"$TMP/ramp.json"
python3 - "$TMP/first.json" "$TMP/ramp.json" <<'EOF' || fail "the model cache on the replicas"
import json, sys
pods = json.load(open(sys.argv[1]))["items"] + json.load(open(sys.argv[2]))["items"]
fetch = {}
for p in pods:
    node = p["spec"].get("nodeName")
    a = p["metadata"].get("annotations", {}).get("corral.dev/model-fetch", "")
    if node and a:
        fetch.setdefault(node, []).append(a)
    assert p.get("status", {}).get("phase") != "Failed", p["metadata"]["name"]
print(fetch)
assert any(a.startswith("hit ") for a in fetch.get("sim-node-0", [])), fetch
assert any(a.startswith("fetched ") for a in fetch.get("sim-node-1", [])), fetch
hit = min(float(a.split()[1].rstrip("s")) for a in fetch["sim-node-0"] if a.startswith("hit "))
got = min(float(a.split()[1].rstrip("s")) for a in fetch["sim-node-1"] if a.startswith("fetched "))
assert hit < got, (hit, got)
EOF
touch "$STOP"
wait "$HOLD"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] > 0 and d["failed"] == 0, d' \
    "$TMP/hold" || fail "requests lost in the ramp: $(cat "$TMP/hold")"
until_ok "$W" zero || fail "idle, it did not go back to zero: $(C get pods)"

# --- 4. a 10% canary, rollback, promotion ---------------------------------------------------------
service 10 20 10 | C apply -f - >/dev/null || fail "apply the canary"
canary() { [ "$(traffic)" = "llm-predictor-00001=90,llm-predictor-00002=10" ]; }
until_ok "$W" canary || fail "canary traffic: $(traffic)"
# revision_counts N: N requests; "rev1 rev2" counts, by the router's
# Corral-Revision header, else the answering pod's revision label.
# The pods are listed before and after the burst: a replica may be scaled
# away right after it answered.
revision_counts() {
    pods_json >"$TMP/pods-before.json"
    python3 tests/cli/infer_client.py burst "$U" "$1" 20 --max-tokens 1 >"$TMP/burst"
    pods_json >"$TMP/pods.json"
    python3 - "$TMP/burst" "$TMP/pods-before.json" "$TMP/pods.json" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))
rev = {p["metadata"]["name"]: p["metadata"]["labels"].get("corral.dev/revision")
       for f in sys.argv[2:] for p in json.load(open(f))["items"]}
by = dict(b["by_revision"])
if not by:
    for pod, n in b["by_pod"].items():
        by[rev.get(pod, "?")] = by.get(rev.get(pod, "?"), 0) + n
print(b["failed"], by.get("llm-predictor-00001", 0), by.get("llm-predictor-00002", 0))
EOF
}
read -r lost r1 r2 <<<"$(revision_counts 2000)"
[ "$lost" = 0 ] || fail "$lost of 2000 canary requests failed: $(cat "$TMP/burst")"
python3 -c "import sys; r2 = $r2 / 2000; sys.exit(0 if 0.07 <= r2 <= 0.13 else 1)" ||
    fail "the canary got $r2 of 2000 (want 10% +- 3%; the rest $r1)"

service 10 20 0 | C apply -f - >/dev/null || fail "apply the rollback"
rolled_back() { [ "$(traffic)" = "llm-predictor-00001=100" ]; }
until_ok "$W" rolled_back || fail "rollback traffic: $(traffic)"
read -r lost r1 r2 <<<"$(revision_counts 100)"
[ "$lost/$r1/$r2" = "0/100/0" ] || fail "after the rollback: lost $lost, rev1 $r1, rev2 $r2"

service 10 20 100 | C apply -f - >/dev/null || fail "apply the promotion"
promoted() { [ "$(traffic)" = "llm-predictor-00002=100" ]; }
until_ok "$W" promoted || fail "promotion traffic: $(traffic)"
read -r lost r1 r2 <<<"$(revision_counts 100)"
[ "$lost/$r1/$r2" = "0/0/100" ] || fail "after the promotion: lost $lost, rev1 $r1, rev2 $r2"
finish
