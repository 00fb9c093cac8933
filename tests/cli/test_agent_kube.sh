# corral agent --kube (cluster mode, kubelet runs the pods), against
# `corral apiserver` (--strict when the build has it): the agent waits for
# the Node kubelet registers (created here with kubelet's own labels and
# status), then patches in the GPU Feature Discovery labels, the topology
# annotation and GPUHealthy=True without touching kubelet's fields (Ready,
# capacity, the user's labels and taints), creates no Lease and writes no
# pod status; /metrics names the pod holding each GPU (from gpu-ids); an
# unreadable GPU and an XID (the fake NVML, steered through FAKE_NVML_CTL)
# set GPUHealthy=False and the corral.dev/gpu-unhealthy taint, and both go
# when the GPU is healthy again. With the device plugin built in: the
# stand-in kubelet admits a pod the scheduler bound to 2 GPUs of a DGX-1
# (an NVLink pair, not the first two) and kubelet gives it those devices,
# its container NVIDIA_VISIBLE_DEVICES = the UUIDs of its gpu-ids.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    stop_server
    [ -n "${KEEP:-}" ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

STRICT=()
"$CORRAL" apiserver --help 2>&1 | grep -q -- '--strict' && STRICT=(--strict)
start_server "$TMP/data" "${STRICT[@]}"
get() { curl -s "$API$1"; }
post() {
    local code
    code=$(curl -s -o "$TMP/post.out" -w '%{http_code}' -H 'Content-Type: application/json' \
        -X POST "$API$1" -d "$2")
    [ "$code" = 201 ] || fail "POST $1: HTTP $code $(cat "$TMP/post.out")"
}
patch_status() {
    local code
    code=$(curl -s -o "$TMP/patch.out" -w '%{http_code}' -X PATCH \
        -H 'Content-Type: application/merge-patch+json' "$API$1/status" -d "$2")
    [ "$code" = 200 ] || fail "PATCH $1/status: HTTP $code $(cat "$TMP/patch.out")"
}
# until_py PATH PYEXPR: wait (~30 s) until PYEXPR holds for o = GET PATH as JSON.
until_py() {
    for _ in $(seq 1 $((${KUBE_WAIT:-30} * 5))); do
        get "$1" | python3 -c "import json,sys; o=json.load(sys.stdin); sys.exit(0 if ($2) else 1)" \
            2>/dev/null && return 0
        sleep 0.2
    done
    fail "$1 never had $2: $(get "$1" | head -c 600)"
    return 1
}
# A Node as kubelet registers it.
kubelet_node() {
    post /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"'"$1"'",
  "labels":{"kubernetes.io/hostname":"'"$1"'","kubernetes.io/os":"linux","team":"ml"}},
  "spec":{"taints":[{"key":"dedicated","value":"ml","effect":"NoSchedule"}]},
  "status":{"capacity":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"'"$2"'"},
   "allocatable":{"cpu":"63","memory":"500Gi","pods":"110","nvidia.com/gpu":"'"$2"'"},
   "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status",
     "lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}],
   "nodeInfo":{"kubeletVersion":"v1.32.0"}}}'
}

# --- labels, topology, condition; kubelet's fields untouched -----------------------------
MPORT=$(free_port)
"$CORRAL" agent --kube --server "$API" --node-name gpu-1 --gpus sim:h100-sxm-8 --device-plugin=false \
    --metrics-listen "127.0.0.1:$MPORT" --heartbeat-seconds 1 --root "$TMP/root1" \
    --model-cache-dir "$TMP/models1" 2>"$TMP/agent1.log" &
PIDS+=($!)
until_ok 30 grep -q "waiting for kubelet to register it" "$TMP/agent1.log" ||
    fail "the agent does not say it waits for the Node: $(cat "$TMP/agent1.log")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/nodes/gpu-1")" = 404 ] ||
    fail "the agent created the Node"
kubelet_node gpu-1 8
N=/api/v1/nodes/gpu-1
until_py $N 'o["metadata"]["labels"].get("nvidia.com/gpu.product")=="NVIDIA-H100-80GB-HBM3"'
until_py $N '[c for c in o["status"]["conditions"] if c["type"]=="GPUHealthy" and c["status"]=="True"]'
until_py $N '"NV18" in o["metadata"]["annotations"].get("corral.dev/gpu-topology","")'
get $N | python3 -c '
import json, sys
o = json.load(sys.stdin)
m, s = o["metadata"], o["status"]
bad = []
want = {"nvidia.com/gpu.count": "8", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.family": "hopper",
        "team": "ml", "kubernetes.io/os": "linux", "corral.dev/gpu-source": "sim"}
for k, v in want.items():
    if m["labels"].get(k) != v: bad.append("label %s=%r" % (k, m["labels"].get(k)))
if o["spec"].get("taints") != [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]:
    bad.append("taints %r" % o["spec"].get("taints"))
ready = [c for c in s["conditions"] if c["type"] == "Ready"]
if ready != [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
              "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]:
    bad.append("Ready %r" % ready)
if s["allocatable"] != {"cpu": "63", "memory": "500Gi", "pods": "110", "nvidia.com/gpu": "8"}:
    bad.append("allocatable %r" % s["allocatable"])
if s["capacity"]["cpu"] != "64" or s.get("nodeInfo", {}).get("kubeletVersion") != "v1.32.0":
    bad.append("capacity/nodeInfo %r %r" % (s["capacity"], s.get("nodeInfo")))
if s.get("daemonEndpoints", {}).get("kubeletEndpoint", {}).get("Port"): bad.append("kubelet port written")
if bad: print("\n".join(bad))' >"$TMP/bad"
[ -s "$TMP/bad" ] && fail "gpu-1 after the agent: $(cat "$TMP/bad")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/gpu-1")" = 404 ] ||
    fail "the agent made a Lease"

# A pod kubelet runs on gpu-1 holding GPUs 2 and 5: /metrics names it; its status stays kubelet's.
post /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"train",
  "annotations":{"corral.dev/gpu-ids":"2,5","corral.dev/sim-utilization":"70"}},
  "spec":{"nodeName":"gpu-1","containers":[{"name":"main","image":"pytorch","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}'
patch_status /api/v1/namespaces/default/pods/train '{"status":{"phase":"Running","podIP":"10.1.2.3",
  "containerStatuses":[{"name":"main","ready":true,"restartCount":0,"image":"pytorch","imageID":"",
   "state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}}'
until_ok 30 sh -c "curl -s http://127.0.0.1:$MPORT/metrics | grep -q 'DCGM_FI_DEV_GPU_UTIL{gpu=\"5\".*pod=\"train\"'" ||
    fail "/metrics does not show train on GPU 5: $(curl -s "http://127.0.0.1:$MPORT/metrics" | grep GPU_UTIL)"
curl -s "http://127.0.0.1:$MPORT/metrics" | grep -q 'DCGM_FI_DEV_GPU_UTIL{gpu="2".*Hostname="gpu-1".*pod="train"' ||
    fail "/metrics lacks GPU 2 of train"
get /api/v1/namespaces/default/pods/train | python3 -c '
import json, sys
o = json.load(sys.stdin)
s = o["status"]
assert s.get("podIP") == "10.1.2.3" and "hostIP" not in s and "conditions" not in s, s
assert "corral.dev/gpu-seconds-used" not in o["metadata"].get("annotations", {})' ||
    fail "the agent wrote the pod's status"

# --- health: an unreadable GPU, then an XID (the fake NVML) ---------------------------------
if [ -f build/tests/fake_nvml.so ]; then
    CTL=$TMP/ctl
    mkdir -p "$CTL"
    kubelet_node gpu-2 4
    CORRAL_NVML_LIB=$PWD/build/tests/fake_nvml.so FAKE_NVML_CTL=$CTL \
        "$CORRAL" agent --kube --server "$API" --node-name gpu-2 --gpus nvml --device-plugin=false \
        --metrics-listen off --heartbeat-seconds 1 --gpu-xid-hold-seconds 8 --root "$TMP/root2" \
        --model-cache-dir "$TMP/models2" 2>"$TMP/agent2.log" &
    PIDS+=($!)
    N2=/api/v1/nodes/gpu-2
    cond() { echo '[c for c in o["status"]["conditions"] if c["type"]=="GPUHealthy" and '"$1"']'; }
    TAINTED='[t for t in o["spec"].get("taints",[]) if t["key"]=="corral.dev/gpu-unhealthy" and t["effect"]=="NoSchedule"]'
    until_py $N2 "$(cond 'c["status"]=="True"')"
    touch "$CTL/lost"
    until_py $N2 "$(cond 'c["status"]=="False" and c["reason"]=="GPUUnreadable"')"
    until_py $N2 "$TAINTED"
    until_py $N2 '[t for t in o["spec"]["taints"] if t["key"]=="dedicated"]'
    rm -f "$CTL/lost"
    until_py $N2 "$(cond 'c["status"]=="True"') and not $TAINTED"
    echo "1:79" >"$CTL/xid"
    until_py $N2 "$(cond 'c["status"]=="False" and c["reason"]=="XidError" and "XID 79" in c["message"]')"
    until_py $N2 "$TAINTED"
    until_py $N2 "$(cond 'c["status"]=="True"') and not $TAINTED"
    until_py $N2 'o["spec"]["taints"]==[{"key":"dedicated","value":"ml","effect":"NoSchedule"}]'
    until_py $N2 '[c for c in o["status"]["conditions"] if c["type"]=="Ready" and c["lastHeartbeatTime"]=="2026-01-01T00:00:00Z"]'
else
    fail "build/tests/fake_nvml.so is missing (make build/tests/fake_nvml.so)"
fi

# --- the device plugin: the stand-in kubelet admits a pod the scheduler bound ---------------
if "$CORRAL" standin-kubelet --help >/dev/null 2>&1; then
    DP=$TMP/dp
    mkdir -p "$DP"
    kubelet_node gpu-3 8
    "$CORRAL" standin-kubelet --dir "$DP" --server "$API" --node-name gpu-3 >"$TMP/kubelet.out" \
        2>"$TMP/kubelet.log" &
    PIDS+=($!)
    until_ok 30 test -S "$DP/kubelet.sock" || fail "no kubelet.sock: $(cat "$TMP/kubelet.log")"
    "$CORRAL" agent --kube --server "$API" --node-name gpu-3 --gpus sim:dgx1-v100-8 \
        --device-plugin-dir "$DP" --metrics-listen off --heartbeat-seconds 1 --root "$TMP/root3" \
        --model-cache-dir "$TMP/models3" 2>"$TMP/agent3.log" &
    PIDS+=($!)
    until_ok 30 grep -q "device plugin: serving" "$TMP/agent3.log" ||
        fail "the device plugin did not start: $(cat "$TMP/agent3.log")"
    # only gpu-3 may take it (the others are tainted dedicated=ml)
    "$CORRAL" scheduler --server "$API" 2>"$TMP/sched.log" &
    PIDS+=($!)
    post /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"two"},
      "spec":{"schedulerName":"corral","tolerations":[{"key":"dedicated","operator":"Exists"}],
      "nodeSelector":{"kubernetes.io/hostname":"gpu-3"},
      "containers":[{"name":"main","image":"pytorch","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}'
    until_ok 30 grep -q '"pod":"default/two"' "$TMP/kubelet.out" ||
        fail "the stand-in kubelet did not admit two: $(cat "$TMP/kubelet.out" "$TMP/kubelet.log" "$TMP/agent3.log" "$TMP/sched.log")"
    get /api/v1/namespaces/default/pods/two >"$TMP/two.json"
    "$CORRAL" agent --print-gpus --gpus sim:dgx1-v100-8 --node-name gpu-3 >"$TMP/gpus.txt"
    python3 - "$TMP/two.json" "$TMP/gpus.txt" "$TMP/kubelet.out" <<'EOF' || fail "NVIDIA_VISIBLE_DEVICES differs from the pod's gpu-ids"
import json, re, sys
pod = json.load(open(sys.argv[1]))
ids = pod["metadata"]["annotations"]["corral.dev/gpu-ids"].split(",")
uuid = {}
for line in open(sys.argv[2]):
    m = re.match(r"GPU (\d+): .*UUID: (GPU-[0-9a-f-]+)", line)
    if m: uuid[m.group(1)] = m.group(2)
want = ",".join(uuid[i] for i in ids)
adm = [json.loads(l) for l in open(sys.argv[3]) if '"default/two"' in l][0]
got = adm["envs"].get("NVIDIA_VISIBLE_DEVICES")
print("gpu-ids", ids, "want", want, "got", got, "devices", adm.get("devices"))
sys.exit(0 if got == want and len(ids) == 2 and sorted(adm.get("devices", [])) == sorted(want.split(",")) else 1)
EOF
fi
finish
