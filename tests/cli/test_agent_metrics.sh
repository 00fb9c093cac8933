# The node agent's metrics through `corral up` with one simulated node and
# one hollow node: /metrics (DCGM exporter names) and /metrics/resource on
# each Node's kubelet port pass `promtool check metrics` (the only lint
# findings allowed are the DCGM names' own: counters without _total, as
# dcgm-exporter prints them), DCGM_FI_DEV_GPU_UTIL of the GPU a pod with
# corral.dev/sim-utilization "85" holds goes up while it runs, carries the
# pod's labels, and drops to 0 after it ends, and the finished pod carries
# corral.dev/gpu-seconds-used. UP_WAIT bounds every wait (seconds).
. tests/cli/lib.bash
UP_WAIT=${UP_WAIT:-30}
UP_PID=""
D=$TMP/d
cleanup() {
    if [ -n "$UP_PID" ] && kill -INT "$UP_PID" 2>/dev/null; then
        for _ in $(seq 1 20); do kill -0 "$UP_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$UP_PID" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
PROMTOOL=$(command -v promtool || true)
[ -n "$PROMTOOL" ] || { tools/deps.sh test >/dev/null 2>&1; PROMTOOL=$(command -v promtool || true); }
[ -n "$PROMTOOL" ] || { fail "promtool (Debian prometheus) is not installed"; finish; }
PORT=$(free_port)
export KUBECONFIG=$D/kubeconfig

up_start "$UP_WAIT" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 1 --hollow-nodes 1 \
    --stop-timeout 5 --ready-timeout "$UP_WAIT" || { fail "corral up did not come up"; finish; }

# kport NODE: the Node's kubelet port (waits for the Node).
kport() {
    for _ in $(seq 1 $((UP_WAIT * 10))); do
        local p
        p=$("$CORRAL" get node "$1" -o json 2>/dev/null | python3 -c \
            'import json,sys; print(json.load(sys.stdin)["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])' 2>/dev/null)
        [ -n "$p" ] && [ "$p" != 0 ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

# check_exposition URL WHAT: promtool accepts it (DCGM names' lint aside).
check_exposition() {
    curl -sf "$1" >"$TMP/expo" || { fail "GET $1"; return; }
    local out rc
    out=$("$PROMTOOL" check metrics <"$TMP/expo" 2>&1)
    rc=$?
    if [ "$rc" = 1 ]; then
        fail "promtool rejects $2: $out"
    elif [ "$rc" != 0 ] && printf '%s\n' "$out" | grep -v '^DCGM_FI_' | grep -q .; then
        fail "promtool lint findings in $2 beyond the DCGM names: $out"
    fi
}

SIM_PORT=$(kport sim-node-0) || fail "sim-node-0 has no kubelet port"
HOLLOW_PORT=$(kport hollow-0) || fail "hollow-0 has no kubelet port"
for p in $SIM_PORT $HOLLOW_PORT; do
    check_exposition "http://127.0.0.1:$p/metrics" "/metrics on port $p"
    check_exposition "http://127.0.0.1:$p/metrics/resource" "/metrics/resource on port $p"
done
OUT=$(curl -s "http://127.0.0.1:$HOLLOW_PORT/metrics")
expect_out 'Hostname="hollow-0"'
expect_out 'DCGM_FI_DEV_GPU_UTIL{gpu="7",'

# A pod at 85 % on sim-node-0 (the hollow node is full of nothing but would
# take it too: pin it).
cat >"$TMP/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: busy
  annotations:
    corral.dev/sim-utilization: "85"
spec:
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
  restartPolicy: Never
  containers:
  - name: main
    image: none
    command: ["sleep", "4"]
    resources:
      limits:
        nvidia.com/gpu: 1
EOF
expect_exit 0 "$CORRAL" apply -f "$TMP/pod.yaml"

# util_of_busy: the GPU_UTIL value of the series labelled pod="busy" (empty if none).
util_of_busy() {
    curl -s "http://127.0.0.1:$SIM_PORT/metrics" |
        sed -n 's/^DCGM_FI_DEV_GPU_UTIL{gpu="\([0-9]*\)".*container="main",namespace="default",pod="busy"} \([0-9]*\)$/\1 \2/p'
}
seen=""
for _ in $(seq 1 $((UP_WAIT * 10))); do
    seen=$(util_of_busy)
    [ -n "$seen" ] && break
    sleep 0.1
done
[ -n "$seen" ] || fail "no DCGM_FI_DEV_GPU_UTIL series with pod=\"busy\""
GPU=${seen% *}
UTIL=${seen#* }
[ "${UTIL:-0}" -ge 80 ] && [ "${UTIL:-0}" -le 90 ] || fail "busy's GPU at $UTIL%, want about 85"

# After the pod ends its GPU idles again and the pod has its GPU time.
phase=""
for _ in $(seq 1 $((UP_WAIT * 10))); do
    phase=$("$CORRAL" get pod busy -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"].get("phase",""))')
    [ "$phase" = Succeeded ] && break
    sleep 0.2
done
[ "$phase" = Succeeded ] || fail "busy is $phase"
idle=""
for _ in $(seq 1 $((UP_WAIT * 10))); do
    idle=$(curl -s "http://127.0.0.1:$SIM_PORT/metrics" | grep "^DCGM_FI_DEV_GPU_UTIL{gpu=\"$GPU\"," | sed 's/.* //')
    [ "$idle" = 0 ] && break
    sleep 0.1
done
[ "$idle" = 0 ] || fail "GPU $GPU at $idle% after busy ended"
used=$("$CORRAL" get pod busy -o json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["metadata"].get("annotations",{}).get("corral.dev/gpu-seconds-used",""))')
python3 -c "import sys; v=float('${used:-0}'); sys.exit(0 if 1.0 < v < 4.0 else 1)" ||
    fail "corral.dev/gpu-seconds-used is '$used' (want about 0.85 x 4 s)"
finish
