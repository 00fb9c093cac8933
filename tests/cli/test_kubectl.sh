# kubectl (Debian's kubernetes-client 1.20) against a fresh `corral apiserver`
# over HTTPS with a token and RBAC, as a user runs it: version and discovery,
# create -f of the reference manifests (client-side validation on, which
# needs /openapi/v2), get in every format, describe, apply (strategic merge
# patch), get -w, logs, delete, and RBAC denials with kube's wording.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT
find_kubectl

make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
write_kubeconfig "$TMP/admin.kubeconfig" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
write_kubeconfig "$TMP/alice.kubeconfig" "https://127.0.0.1:$PORT" alice-token-0123456789 "$TMP/cert.pem"
K() { "$KUBECTL" --kubeconfig "$TMP/admin.kubeconfig" --request-timeout=20s "$@"; }
A() { "$KUBECTL" --kubeconfig "$TMP/alice.kubeconfig" --request-timeout=20s "$@"; }

expect_exit 0 K version
expect_out 'Server Version: version.Info{Major:"1", Minor:"20"'
expect_exit 0 K api-resources
expect_out "podgroups"
expect_out "clusterrolebindings"
expect_exit 0 K get namespaces
expect_out "kube-system"

# create -f with validation (protobuf /openapi/v2), every reference manifest.
expect_exit 0 K create -f examples/
expect_out "node/gpu-node-1 created"
expect_out "queue.scheduling.volcano.sh/training-queue created"
expect_out "job.batch.volcano.sh/llama-finetune created"
expect_out "inferenceservice.serving.kserve.io/llama3-service created"
expect_exit 1 K create -f examples/queues.yaml
expect_out 'Error from server (AlreadyExists): error when creating "examples/queues.yaml": queues.scheduling.volcano.sh "training-queue" already exists'

expect_exit 0 K get nodes -o name
expect_out "node/gpu-node-2"
expect_exit 0 K get po
expect_out "cuda-vector-add"
expect_out "NAME              READY   STATUS    RESTARTS   AGE"
expect_exit 0 K get pods -A --show-labels
expect_out "NAMESPACE   NAME              READY   STATUS    RESTARTS   AGE   LABELS"
expect_out "app=cuda-sample"
expect_exit 0 K get nodes -o wide
expect_out "NVIDIA-H100-80GB-HBM3"
expect_exit 0 K get pod cuda-vector-add -o jsonpath='{.spec.schedulerName}/{.status.phase}/{.status.qosClass}'
[ "$OUT" = "default-scheduler/Pending/BestEffort" ] || fail "jsonpath: $OUT"
expect_exit 0 K get q,pg,vcjob,isvc -A
expect_out "training-queue"
expect_out "llama-finetune"
expect_exit 0 K get pods -o yaml
expect_out "kind: List"
expect_exit 0 K get nodes -l nvidia.com/gpu.present=true -o name
expect_out "node/gpu-node-1"
expect_exit 0 K get pods --field-selector=status.phase=Running
expect_out "No resources found"

expect_exit 0 K describe node gpu-node-1
expect_out "nvidia.com/gpu:"
expect_out "Capacity:"
expect_exit 0 K describe pod cuda-vector-add
expect_out "Node-Selectors:"
expect_out "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"
expect_exit 0 K describe queue training-queue
expect_out "Reclaimable:"

# apply: kubectl sends a strategic merge patch for pods.
cat >"$TMP/web.yaml" <<POD
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - name: c
    image: nginx:1
    env: [{name: A, value: "1"}]
POD
expect_exit 0 K apply -f "$TMP/web.yaml"
expect_out "pod/web created"
sed -i 's/value: "1"/value: "2"/' "$TMP/web.yaml"
expect_exit 0 K apply -f "$TMP/web.yaml"
expect_out "pod/web configured"
expect_exit 0 K get pod web -o jsonpath='{.spec.containers[0].env[0].value}'
[ "$OUT" = 2 ] || fail "apply did not patch env: $OUT"
expect_exit 0 K patch pod web -p '{"metadata":{"labels":{"tier":"front"}}}'
expect_exit 0 K get pod web --show-labels
expect_out "tier=front"

# get -w: the initial list, then the change.
"$KUBECTL" --kubeconfig "$TMP/admin.kubeconfig" get pods -w >"$TMP/watch" 2>&1 &
watch_pid=$!
for _ in $(seq 1 50); do grep -q web "$TMP/watch" && break; sleep 0.1; done
expect_exit 0 K label pod web watched=yes
for _ in $(seq 1 50); do [ "$(grep -c web "$TMP/watch")" -ge 2 ] && break; sleep 0.1; done
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
[ "$(grep -c '^web ' "$TMP/watch")" -ge 2 ] || fail "get -w saw no change: $(cat "$TMP/watch")"

# logs: an unscheduled pod has none yet (kube's message), a bound one is
# served by its node agent (none runs here).
expect_exit 1 K logs web
expect_out 'in pod "web" is waiting to start'

# RBAC: alice may do nothing until bound; then only what her Role grants.
expect_exit 1 A get pods
expect_out 'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"'
cat >"$TMP/rbac.yaml" <<RBAC
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- apiGroups: [""]
  resources: [pods, pods/log]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-reads-pods, namespace: default}
subjects: [{kind: User, name: alice}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
RBAC
expect_exit 0 K apply -f "$TMP/rbac.yaml"
expect_exit 0 A get pods
expect_out "web"
expect_exit 1 A delete pod web
expect_out 'pods "web" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "default"'
expect_exit 1 A get nodes
expect_out 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope'
expect_exit 0 A auth can-i watch pods
expect_out "yes"
expect_exit 1 A auth can-i delete pods
expect_out "no"
expect_exit 0 A auth can-i get pods --subresource=log
expect_exit 0 K auth can-i '*' '*' --all-namespaces
expect_out "yes"

expect_exit 0 K delete pod web
expect_out 'pod "web" deleted'
expect_exit 0 K delete -f examples/queues.yaml
expect_out 'queue.scheduling.volcano.sh "training-queue" deleted'
expect_exit 1 K get queue training-queue
expect_out 'Error from server (NotFound): queues.scheduling.volcano.sh "training-queue" not found'

# A wrong token: 401; no token: 401 too, except health and version.
expect_exit 1 "$KUBECTL" --server "https://127.0.0.1:$PORT" --certificate-authority "$TMP/cert.pem" \
    --token wrong get pods
expect_out "error: You must be logged in to the server (Unauthorized)"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/cert.pem" "https://127.0.0.1:$PORT/api/v1/pods")
[ "$code" = 401 ] || fail "anonymous list: HTTP $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/cert.pem" "https://127.0.0.1:$PORT/healthz")
[ "$code" = 200 ] || fail "anonymous healthz: HTTP $code"
finish
