# Inference serving on the process runtime under `corral up`: two replicas
# of a web server on containerPort 8080 each bind their own pod address
# ($(POD_IP) from fieldRef status.podIP) and both become Ready through an
# httpGet readinessProbe on a named port; a server that starts listening
# late is Ready only once it listens (tcpSocket probe); the agent's own
# directory is first in PATH; a GPU pod's CORRAL_GPU_LOAD_FILE becomes its
# GPU's DCGM_FI_DEV_GPU_UTIL. The model cache: a LocalModelNodeGroup of
# this node with a file:// and an http:// LocalModelCache, both downloaded
# (LocalModelNode status, the Node's corral.dev/model-caches); a pod with
# corral.dev/model-uri sees MODEL_DIR and /mnt/models in its args replaced
# and is annotated "hit"; one whose model no cache holds is "fetched"; a new
# cache beyond storageLimit evicts the least recently used entry no group
# wants any more. UP_WAIT bounds every wait (seconds).
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

# --- the model cache ---------------------------------------------------------------------
mkfile() { head -c "$2" /dev/urandom >"$1"; }
mkdir -p "$TMP/model1/sub" "$TMP/www" "$TMP/model3" "$TMP/model4"
mkfile "$TMP/model1/a.bin" 1048576
mkfile "$TMP/model1/sub/b.bin" 1048576
mkfile "$TMP/model1/c.json" 1048576
mkfile "$TMP/www/weights.bin" 2097152
mkfile "$TMP/model3/w.bin" 3145728
mkfile "$TMP/model4/w.bin" 524288
HPORT=$(free_port)
(cd "$TMP/www" && exec python3 -m http.server --bind 127.0.0.1 "$HPORT" >/dev/null 2>&1) &
HTTPD=$!
trap 'kill $HTTPD 2>/dev/null; cleanup' EXIT
CACHE=$D/agents/sim-node-0/models
cat >"$TMP/cache.yaml" <<EOF
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelNodeGroup
metadata: {name: here}
spec:
  storageLimit: 6Mi
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: m1}
spec: {sourceModelUri: "file://$TMP/model1", modelSize: 3Mi, nodeGroups: [here]}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: m2}
spec: {sourceModelUri: "http://127.0.0.1:$HPORT/weights.bin", modelSize: 2Mi, nodeGroups: [here]}
EOF
until_ok "$UP_WAIT" curl -sf "http://127.0.0.1:$HPORT/weights.bin" -o /dev/null || fail "the test's HTTP server"
"$CORRAL" apply -f "$TMP/cache.yaml" >/dev/null || fail "apply the caches"
lmn_status() {
    "$CORRAL" get localmodelnode sim-node-0 -o json 2>/dev/null | python3 -c \
        "import json,sys; s=json.load(sys.stdin)['status']['modelStatus']; print(','.join(k+'='+v for k,v in sorted(s.items())))"
}
caches_ann() {
    "$CORRAL" get node sim-node-0 -o json | python3 -c \
        "import json,sys; print(json.load(sys.stdin)['metadata'].get('annotations',{}).get('corral.dev/model-caches',''))"
}
lmn_is() { [ "$(lmn_status)" = "$1" ]; }
until_ok "$UP_WAIT" lmn_is "m1=ModelDownloaded,m2=ModelDownloaded" ||
    fail "LocalModelNode: $(lmn_status) (want m1, m2 ModelDownloaded); agent: $(grep 'model' "$TMP/up.err" | tail -3)"
[ "$(caches_ann)" = "m1,m2" ] || fail "corral.dev/model-caches is '$(caches_ann)'"
cmp -s "$TMP/model1/sub/b.bin" "$CACHE/m1/sub/b.bin" || fail "m1's copy differs"
cmp -s "$TMP/www/weights.bin" "$CACHE/m2/weights.bin" || fail "m2's download differs"
ls -a "$CACHE" | grep -q '^\.tmp-' && fail "a temporary download left in $CACHE"

model_pod() { # NAME URI
    cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {corral.dev/model-uri: "$2"}
spec:
  nodeSelector: {kubernetes.io/hostname: sim-node-0}
  restartPolicy: Never
  containers:
  - name: main
    image: none
    command: ["sh", "-c", "echo MODEL_DIR=\$MODEL_DIR; ls -R \$MODEL_DIR; echo ARG=\$1", "sh", "--model=/mnt/models/sub"]
EOF
}
succeeded() { [ "$(pod_field "$1" "p['status']['phase']")" = Succeeded ]; }
fetch_ann() { pod_field "$1" "p['metadata']['annotations'].get('corral.dev/model-fetch','')"; }
model_pod use-m1 "file://$TMP/model1" >"$TMP/p1.yaml"
"$CORRAL" apply -f "$TMP/p1.yaml" >/dev/null || fail "apply use-m1"
until_ok "$UP_WAIT" succeeded use-m1 || fail "use-m1 did not succeed: $(pod_field use-m1 "p['status']")"
OUT=$("$CORRAL" logs use-m1 2>&1)
expect_out "MODEL_DIR=$CACHE/m1"
expect_out "c.json"
expect_out "ARG=--model=$CACHE/m1/sub"
case "$(fetch_ann use-m1)" in "hit "*s) ;; *) fail "use-m1's corral.dev/model-fetch is '$(fetch_ann use-m1)'" ;; esac

model_pod use-m2 "http://127.0.0.1:$HPORT/weights.bin" >"$TMP/p2.yaml"
model_pod use-m4 "file://$TMP/model4" >"$TMP/p4.yaml"
"$CORRAL" apply -f "$TMP/p2.yaml" >/dev/null || fail "apply use-m2"
"$CORRAL" apply -f "$TMP/p4.yaml" >/dev/null || fail "apply use-m4"
until_ok "$UP_WAIT" succeeded use-m2 || fail "use-m2 did not succeed"
until_ok "$UP_WAIT" succeeded use-m4 || fail "use-m4 did not succeed: $(pod_field use-m4 "p['status']")"
OUT=$("$CORRAL" logs use-m2 2>&1)
expect_out "weights.bin"
case "$(fetch_ann use-m2)" in "hit "*s) ;; *) fail "use-m2's corral.dev/model-fetch is '$(fetch_ann use-m2)'" ;; esac
case "$(fetch_ann use-m4)" in "fetched "*s) ;; *) fail "use-m4's corral.dev/model-fetch is '$(fetch_ann use-m4)'" ;; esac

# m1 leaves the group's list; m3 (3 MiB) does not fit beside m1, m2 and
# m4's copy (5.5 MiB of 6): m1, the least recently used entry no group
# wants, is evicted (which frees enough: m4's copy stays).
"$CORRAL" delete localmodelcache m1 >/dev/null || fail "delete m1"
cat >"$TMP/m3.yaml" <<EOF
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: m3}
spec: {sourceModelUri: "file://$TMP/model3", modelSize: 3Mi, nodeGroups: [here]}
EOF
"$CORRAL" apply -f "$TMP/m3.yaml" >/dev/null || fail "apply m3"
until_ok "$UP_WAIT" lmn_is "m2=ModelDownloaded,m3=ModelDownloaded" ||
    fail "LocalModelNode: $(lmn_status); agent: $(grep "model" "$TMP/up.err" | tail -5)"
[ -e "$CACHE/m1" ] && fail "m1 was not evicted"
ls "$CACHE" | grep -q '^_uri-' || fail "m4's copy was evicted too"
[ "$(caches_ann)" = "m2,m3" ] || fail "corral.dev/model-caches is '$(caches_ann)' (want m2,m3)"
OUT=$(curl -s "http://127.0.0.1:$KPORT/metrics")
expect_out 'corral_agent_model_fetch_seconds_count{scheme="http"} 1'
expect_out 'corral_agent_model_cache_limit_bytes 6291456'
finish
