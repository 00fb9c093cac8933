#!/bin/bash
# needs: the whole of issue 13 (controller, autoscaler, router, model cache).
#
# Elastic inference under `corral up`, with the stand-in model server
# (examples/inference/standin-runtime.yaml), printing the numbers of
# docs/benchmarks.md ("Elastic inference"):
#  1. scale from zero: the first byte of a request sent at zero replicas,
#     against the moment its replica became ready (its /health first answered,
#     polled every 10 ms from this machine); goal: first byte <= ready + 200 ms;
#  2. a 0 -> 5 -> 0 burst (N requests, C at once, scaleTarget 4 concurrent
#     per replica, 8 simulated GPUs): requests lost (goal 0), most replicas
#     ready at once, time back to zero;
#  3. cold start with and without the model in the node's cache: request at
#     zero to first byte, and the agent's corral.dev/model-fetch, for a
#     service pinned to the node that caches the model and for one pinned to
#     a node that must fetch it (MODEL_MIB of files).
# Before those (and without the rest of issue 13): the stand-in alone, S
# concurrent streams of 50 tokens at 20 ms per token: answered, its CPU
# time and memory before and after.
# usage: bench/inference_bench.sh   (env: CORRAL, N=1000, C=20, MODEL_MIB=512, W=60, S=500)
set -u
cd "$(dirname "$0")/.."
CORRAL=${CORRAL:-build/corral}
N=${N:-1000}
CONC=${C:-20}
MODEL_MIB=${MODEL_MIB:-512}
W=${W:-60}
S=${S:-500}

# --- the stand-in alone ------------------------------------------------------------------------
SPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$CORRAL" standin-llm --port "$SPORT" --token-ms 20 --max-num-seqs "$S" --quiet &
SPID=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$SPORT/health" >/dev/null && break; sleep 0.1; done
cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$SPID/stat"; }
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$SPID/status"; }
echo "== the stand-in alone: $S concurrent streams of 50 tokens, 20 ms per token"
cpu0=$(cpu) rss0=$(rss)
res=$(python3 tests/cli/infer_client.py burst "http://127.0.0.1:$SPORT/v1/completions" "$S" "$S" \
    --stream --max-tokens 50 --timeout 120)
cpu1=$(cpu)
python3 tests/cli/infer_client.py burst "http://127.0.0.1:$SPORT/v1/completions" 2000 50 --max-tokens 1 >/dev/null
echo "  $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["ok"], "answered,", d["failed"], "failed; first token p50 %.0f ms, p99 %.0f ms" % (d["ttfb_ms"]["p50"], d["ttfb_ms"]["p99"]))' "$res")"
echo "  server CPU $(python3 -c "print('%.2f' % ($cpu1 - $cpu0))") s for the $((S * 50)) tokens; RSS $rss0 before, $(rss) after 2,000 more requests"
kill -TERM "$SPID"
wait "$SPID"

if ! "$CORRAL" router --help >/dev/null 2>&1; then
    echo "inference_bench: no \`corral router\` in $CORRAL (needs the whole of issue 13)"
    exit 77
fi
TMP=$(mktemp -d)
D=$TMP/d
UP_PID=""
trap '[ -n "$UP_PID" ] && kill -INT "$UP_PID" 2>/dev/null && wait "$UP_PID"; rm -rf "$TMP"' EXIT
export KUBECONFIG=$D/kubeconfig
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
RPORT=$(port)
"$CORRAL" up --data-dir "$D" --listen "127.0.0.1:$(port)" --sim-nodes 2 --router-listen "127.0.0.1:$RPORT" \
    --extra-config controller.autoscaler-stable-window=6s \
    --extra-config controller.autoscaler-panic-window=1s \
    --extra-config controller.scale-to-zero-grace=2s \
    --extra-config controller.autoscaler-tick=500ms \
    --stop-timeout 5 >"$TMP/up.out" 2>&1 &
UP_PID=$!
for _ in $(seq 1 $((W * 10))); do grep -q "Corral is up" "$TMP/up.out" && break; sleep 0.1; done
grep -q "Corral is up" "$TMP/up.out" || { cat "$TMP/up.out"; exit 1; }
ROUTER=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["router"])' "$D/endpoints.json")

examples/inference/make-demo-model.sh "$TMP/model" "$MODEL_MIB" >/dev/null
cat >"$TMP/base.yaml" <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: inference}
spec: {weight: 1, reclaimable: false}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelNodeGroup
metadata: {name: node0}
spec:
  storageLimit: 10Gi
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: bench}
spec:
  sourceModelUri: file://$TMP/model
  modelSize: ${MODEL_MIB}Mi
  nodeGroups: [node0]
EOF
"$CORRAL" apply -f examples/inference/standin-runtime.yaml -f "$TMP/base.yaml" >/dev/null || exit 1
for _ in $(seq 1 $((W * 5))); do
    kubectl get --raw /apis/serving.kserve.io/v1alpha1/localmodelcaches/bench 2>/dev/null |
        grep -q '"available": *1' && break
    sleep 0.2
done

# service NAME TARGET MAX [NODE]: a stand-in service, pinned to NODE when given.
service() {
    cat <<EOF
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: $1, namespace: default}
spec:
  predictor:
    minReplicas: 0
    maxReplicas: $3
    scaleMetric: concurrency
    scaleTarget: $2
    ${4:+nodeSelector: {kubernetes.io/hostname: $4\}}
    model:
      modelFormat: {name: standin}
      storageUri: file://$TMP/model
      resources: {limits: {nvidia.com/gpu: 1}}
EOF
}
for s in zero:1:1: burst:4:5: cached:1:1:sim-node-0 fetched:1:1:sim-node-1; do
    IFS=: read -r name target max node <<<"$s"
    service "$name" "$target" "$max" "$node" | "$CORRAL" apply -f - >/dev/null
done

python3 - "$CORRAL" "$ROUTER" "$N" "$CONC" "$W" <<'EOF'
import http.client, json, subprocess, sys, threading, time, urllib.parse

corral, router, n, conc, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
sys.path.insert(0, "tests/cli")
import infer_client as ic  # noqa: E402

def pods(svc):
    out = subprocess.run([corral, "get", "pods", "-l", "serving.kserve.io/inferenceservice=" + svc,
                          "-o", "json"], capture_output=True, text=True).stdout
    try:
        return json.loads(out)["items"]
    except ValueError:
        return []

def ready(p):
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in p.get("status", {}).get("conditions", []))

def until(what, fn):
    t = time.monotonic()
    while time.monotonic() - t < wait:
        if fn():
            return time.monotonic() - t
        time.sleep(0.1)
    raise SystemExit("timed out waiting for " + what)

def url(svc):
    return f"{router}/serving/default/{svc}/v1/completions"

def from_zero(svc):
    """Request at zero: (first byte - replica ready) ms, first byte ms, fetch annotation."""
    until(svc + " at zero", lambda: not pods(svc))
    res = {}
    def req():
        res["r"] = ic.one(url(svc), 1, False, 300)
    t0 = time.monotonic()
    th = threading.Thread(target=req)
    th.start()
    t_ready, name = None, None
    while t_ready is None and time.monotonic() - t0 < wait:
        for p in pods(svc):
            ip = p.get("status", {}).get("podIP")
            if not ip:
                continue
            name = p["metadata"]["name"]
            while time.monotonic() - t0 < wait:
                try:
                    c = http.client.HTTPConnection(ip, 8000, timeout=1)
                    c.request("GET", "/health")
                    if c.getresponse().status == 200:
                        t_ready = time.monotonic()
                        break
                except OSError:
                    pass
                time.sleep(0.01)
            break
        time.sleep(0.02)
    th.join()
    code, _, _, _, first = res["r"]
    fetch = next((p["metadata"].get("annotations", {}).get("corral.dev/model-fetch")
                  for p in pods(svc) if p["metadata"]["name"] == name), None)
    if code != 200 or t_ready is None:
        return None, None, fetch
    return (first - t_ready) * 1000, (first - t0) * 1000, fetch

print("== scale from zero (5 runs)")
for i in range(5):
    d, fb, _ = from_zero("zero")
    verdict = "ok" if d is not None and d <= 200 else "OVER"
    print(f"  run {i + 1}: first byte {fb:.0f} ms after the request, {d:.0f} ms after the replica "
          f"was ready (goal <= 200): {verdict}" if d is not None else f"  run {i + 1}: failed")

print(f"== 0 -> 5 -> 0 burst: {n} requests, {conc} at once, 8 tokens each")
until("burst at zero", lambda: not pods("burst"))
peak = [0]
stop = threading.Event()
def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], sum(1 for p in pods("burst") if ready(p)))
        time.sleep(0.2)
w = threading.Thread(target=watch)
w.start()
t0 = time.monotonic()
res = []
lock = threading.Lock()
left = [n]
def worker():
    while True:
        with lock:
            if not left[0]:
                return
            left[0] -= 1
        r = ic.one(url("burst"), 8, True, 300)
        with lock:
            res.append(r[0])
ts = [threading.Thread(target=worker) for _ in range(conc)]
for t in ts: t.start()
for t in ts: t.join()
dur = time.monotonic() - t0
lost = sum(1 for c in res if c != 200)
back = until("burst back to zero", lambda: not pods("burst"))
stop.set()
w.join()
print(f"  {len(res) - lost} ok, {lost} lost (goal 0) in {dur:.1f} s; at most {peak[0]} replicas ready; "
      f"back to zero {back:.1f} s after the last answer")

print("== cold start, with and without the model in the node's cache")
for svc in ("cached", "fetched"):
    d, fb, fetch = from_zero(svc)
    print(f"  {svc:8s}: first byte {fb:.0f} ms after the request at zero; model-fetch: {fetch}"
          if fb is not None else f"  {svc}: failed ({fetch})")
EOF
