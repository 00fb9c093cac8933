# Inference serving on the process runtime under `corral up`: two replicas
# of a web server on containerPort 8080 each bind their own pod address
# ($(POD_IP) from fieldRef status.podIP) and both become Ready through an
# httpGet readinessProbe on a named port; a server that starts listening
# late is Ready only once it listens (tcpSocket probe); the agent's own
# directory is first in PATH; a GPU pod's CORRAL_GPU_LOAD_FILE becomes its
# GPU's DCGM_FI_DEV_GPU_UTIL. UP_WAIT bounds every wait (seconds).
. tests/cli/lib.bash
UP_WAIT=${UP_WAIT:-30}
UP_PID=""
D=$TMP/d
cleanup() {
    [ -n "$UP_PID" ] && kill -INT "$UP_PID" 2>/dev/null && sleep 2 && kill -KILL "$UP_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
PORT=$(free_port)
export KUBECONFIG=$D/kubeconfig

up_start "$UP_WAIT" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 1 \
    --stop-timeout 5 --ready-timeout "$UP_WAIT" || { fail "corral up did not come up"; finish; }

# pod_field POD EXPR: a Python expression on the pod object p.
pod_field() {
    "$CORRAL" get pod "$1" -o json 2>/dev/null | python3 -c "import json,sys; p=json.load(sys.stdin); print($2)"
}
ready() { [ "$(pod_field "$1" "[c['status'] for c in p['status']['conditions'] if c['type']=='Ready'][0]")" = True ]; }
running() { [ "$(pod_field "$1" "p['status']['phase']")" = Running ]; }

server_pod() { # NAME [COMMAND-PREFIX]
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: web}}
spec:
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
  containers:
  - name: web
    image: python
    command: ["sh", "-c", "${2:-} exec python3 -m http.server --bind \$(POD_IP) 8080"]
    ports: [{name: http, containerPort: 8080}]
    env:
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    readinessProbe:
      httpGet: {path: /, port: http}
      periodSeconds: 1
EOF
}
server_pod web-a >"$TMP/a.yaml"
server_pod web-b >"$TMP/b.yaml"
"$CORRAL" apply -f "$TMP/a.yaml" >/dev/null || fail "apply web-a"
"$CORRAL" apply -f "$TMP/b.yaml" >/dev/null || fail "apply web-b"
until_ok "$UP_WAIT" ready web-a || fail "web-a never Ready: $(pod_field web-a "p['status']")"
until_ok "$UP_WAIT" ready web-b || fail "web-b never Ready: $(pod_field web-b "p['status']")"
# One read of each pod (python3 is slow to start on a busy machine).
read -r IPA HOSTA IPS0 CREADY < <(pod_field web-a \
    "p['status']['podIP'], p['status']['hostIP'], p['status']['podIPs'][0]['ip'], p['status']['containerStatuses'][0]['ready']" | tr -d "(),'")
IPB=$(pod_field web-b "p['status']['podIP']")
[ "$IPA" != "$IPB" ] || fail "both replicas got podIP $IPA"
[ "$HOSTA" = 127.0.0.1 ] || fail "hostIP is $HOSTA, not the node's 127.0.0.1"
case "$IPA" in 127.0.0.*) fail "podIP $IPA is in 127.0.0.0/24" ;; 127.*) ;; *) fail "podIP $IPA not loopback" ;; esac
[ "$IPS0" = "$IPA" ] || fail "podIPs[0] $IPS0 differs from podIP $IPA"
[ "$CREADY" = True ] || fail "web-a container not ready"
curl -sf "http://$IPA:8080/" >/dev/null || fail "nothing answers on $IPA:8080"
curl -sf "http://$IPB:8080/" >/dev/null || fail "nothing answers on $IPB:8080"

# A server that listens only once the test says so: Running, not Ready, then Ready.
GO=$TMP/go
cat >"$TMP/late.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: late}
spec:
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
  containers:
  - name: web
    image: python
    command: ["sh", "-c", "echo PATH=\$PATH; command -v corral; while [ ! -e $GO ]; do sleep 0.05; done; exec python3 -m http.server --bind \$(POD_IP) 8080"]
    env:
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    readinessProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 1
      failureThreshold: 1
EOF
"$CORRAL" apply -f "$TMP/late.yaml" >/dev/null || fail "apply late"
until_ok "$UP_WAIT" running late || fail "late never Running"
sleep 0.5
[ "$(pod_field late "[c['status'] for c in p['status']['conditions'] if c['type'] in ('Ready', 'ContainersReady')]")" = "['False', 'False']" ] ||
    fail "late is Ready before it listens"
touch "$GO"
until_ok "$UP_WAIT" ready late || fail "late never Ready once listening"
OUT=$("$CORRAL" logs late 2>&1)
BIN=$(cd "$(dirname "$CORRAL")" && pwd -P)
expect_out "PATH=$BIN:"
expect_out "$BIN/corral"

# A GPU pod writes its load; the node's /metrics reports it for its GPU.
cat >"$TMP/gpu.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: gpu-load}
spec:
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
  containers:
  - name: main
    image: none
    command: ["sh", "-c", "while true; do echo 42 >$CORRAL_GPU_LOAD_FILE.t && mv $CORRAL_GPU_LOAD_FILE.t $CORRAL_GPU_LOAD_FILE; sleep 0.5; done"]
    resources: {limits: {nvidia.com/gpu: 1}}
EOF
"$CORRAL" apply -f "$TMP/gpu.yaml" >/dev/null || fail "apply gpu-load"
until_ok "$UP_WAIT" running gpu-load || fail "gpu-load never Running"
KPORT=$("$CORRAL" get node sim-node-0 -o json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])')
gpu_util_42() { curl -s "http://127.0.0.1:$KPORT/metrics" | grep '^DCGM_FI_DEV_GPU_UTIL{' | grep 'pod="gpu-load"' | grep -q ' 42$'; }
until_ok "$UP_WAIT" gpu_util_42 || fail "DCGM_FI_DEV_GPU_UTIL of gpu-load's GPU is not 42: $(curl -s "http://127.0.0.1:$KPORT/metrics" | grep '^DCGM_FI_DEV_GPU_UTIL{' | grep gpu-load)"
finish
