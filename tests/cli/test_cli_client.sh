# corral apply/get/describe/delete/logs against a fresh `corral apiserver`:
# the server from --server, CORRAL_SERVER or a kubeconfig (HTTPS, token);
# kubectl-like tables, short names, -o wide|json|yaml|name, -A, -l, -w;
# describe of nodes (capacity, GPU topology, allocation), pods (the
# PodScheduled condition, events) and Volcano objects; local validation
# with FILE:LINE:COL before anything is sent; exit codes.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

start_server "$TMP/data"
export CORRAL_SERVER=$API

expect_exit 0 "$CORRAL" apply -f examples/
expect_out "node/gpu-node-1 created"
expect_out "queue.scheduling.volcano.sh/training-queue created"
expect_exit 0 "$CORRAL" apply -f examples/queues.yaml
expect_out "queue.scheduling.volcano.sh/training-queue unchanged"
sed 's/weight: 10/weight: 20/' examples/queues.yaml >"$TMP/q.yaml"
expect_exit 0 "$CORRAL" apply -f "$TMP/q.yaml"
expect_out "queue.scheduling.volcano.sh/training-queue configured"

# Invalid input is reported with its position and nothing is sent.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n  - {name: c, image: i, resources: {limits: {nvidia.com/gpu: 0.5}}}\n' >"$TMP/bad.yaml"
expect_exit 1 "$CORRAL" apply -f "$TMP/bad.yaml"
expect_out "bad.yaml:6:"
expect_out "corral.dev/gpu-milli: 500"
expect_exit 2 "$CORRAL" apply
expect_exit 1 "$CORRAL" get pod bad
expect_out 'Error from server (NotFound): pods "bad" not found'

expect_exit 0 "$CORRAL" get no
expect_out "NAME         STATUS    ROLES    AGE"
expect_out "gpu-node-1"
expect_exit 0 "$CORRAL" get nodes -o wide
expect_out "NVIDIA-H100-80GB-HBM3"
expect_exit 0 "$CORRAL" get q
expect_out "training-queue   20"
expect_exit 0 "$CORRAL" get vcjob,pg -A
expect_out "job.batch.volcano.sh/llama-finetune"
expect_exit 0 "$CORRAL" get isvc -o name
expect_out "inferenceservice.serving.kserve.io/llama3-service"
expect_exit 0 "$CORRAL" get po -A
expect_out "NAMESPACE   NAME              READY   STATUS    RESTARTS   AGE"
expect_exit 0 "$CORRAL" get pods -l app=cuda-sample -o json
expect_out '"kind": "List"'
expect_exit 0 "$CORRAL" get pod/cuda-vector-add -o yaml
expect_out "kind: Pod"
expect_exit 0 "$CORRAL" get pods -n kube-system
expect_out "No resources found in kube-system namespace."
expect_exit 2 "$CORRAL" get widgets
expect_out 'the server doesn'"'"'t have a resource type "widgets"'
expect_exit 2 "$CORRAL" get pods -o table
expect_exit 2 "$CORRAL" get

# The scheduler's work, by hand: bind the pod to two GPUs, record why.
call POST /api/v1/namespaces/default/pods/cuda-vector-add/binding '{"metadata":{"name":"cuda-vector-add","annotations":{"corral.dev/gpu-ids":"0,1"}},"target":{"name":"gpu-node-1"}}'
[ "$CODE" = 201 ] || fail "binding: $CODE $BODY"
PUID=$("$CORRAL" get pod cuda-vector-add -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')
# An event of an earlier pod of the same name (another uid): describe leaves it out, as kubectl.
call POST /api/v1/namespaces/default/events '{"metadata":{"name":"cuda-vector-add.0"},"involvedObject":{"kind":"Pod","namespace":"default","name":"cuda-vector-add","uid":"0000-old"},"reason":"FailedScheduling","message":"an event of the pod before","type":"Warning","source":{"component":"corral-scheduler"},"lastTimestamp":"2026-01-01T00:00:00Z","count":1}'
call POST /api/v1/namespaces/default/events '{"metadata":{"name":"cuda-vector-add.1"},"involvedObject":{"kind":"Pod","namespace":"default","name":"cuda-vector-add","uid":"'"$PUID"'"},"reason":"Scheduled","message":"Successfully assigned default/cuda-vector-add to gpu-node-1","type":"Normal","source":{"component":"corral-scheduler"},"lastTimestamp":"2026-01-01T00:00:00Z","count":1}'
[ "$CODE" = 201 ] || fail "event: $CODE $BODY"

expect_exit 0 "$CORRAL" describe node gpu-node-1
expect_out "Capacity:"
expect_out "nvidia.com/gpu:  8"
expect_out "GPU Topology:"
expect_out "GPU0   X      NV18"
expect_out "default     cuda-vector-add"
expect_out "nvidia.com/gpu   1 (12%)"
expect_out "GPU1   default/cuda-vector-add"
expect_exit 0 "$CORRAL" describe pod cuda-vector-add
expect_out "GPUs:            0,1"
expect_out "PodScheduled   True"
expect_out "Scheduled   "
expect_out "Successfully assigned default/cuda-vector-add to gpu-node-1"
printf '%s' "$OUT" | grep -q "an event of the pod before" && fail "describe shows another pod's event"
expect_exit 0 "$CORRAL" describe queue training-queue
expect_out "Weight:"
expect_exit 0 "$CORRAL" describe vcjob llama-finetune
expect_out "Min Available:"
expect_exit 1 "$CORRAL" describe pod nope
expect_out 'pods "nope" not found'

# logs: proxied to the log server the pod's Node advertises; this node
# advertises none (no agent runs here), and the server says so.
expect_exit 1 "$CORRAL" logs cuda-vector-add --tail 5
expect_out 'node "gpu-node-1" advertises no agent endpoint'

# get -w prints the list, then each change.
"$CORRAL" get pods -w >"$TMP/watch" 2>&1 &
wpid=$!
for _ in $(seq 1 50); do grep -q cuda-vector-add "$TMP/watch" && break; sleep 0.1; done
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: late}\nspec:\n  containers: [{name: c, image: busybox}]\n' >"$TMP/late.yaml"
expect_exit 0 "$CORRAL" apply -f "$TMP/late.yaml"
for _ in $(seq 1 50); do grep -q late "$TMP/watch" && break; sleep 0.1; done
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
grep -q "^late " "$TMP/watch" || fail "get -w: $(cat "$TMP/watch")"

expect_exit 0 "$CORRAL" delete pod late
expect_out 'pod "late" deleted'
expect_exit 0 "$CORRAL" delete -f examples/queues.yaml
expect_out 'queue.scheduling.volcano.sh "inference" deleted'
expect_exit 1 "$CORRAL" delete q inference
expect_out 'queues.scheduling.volcano.sh "inference" not found'
expect_exit 0 "$CORRAL" delete q inference --ignore-not-found
expect_exit 2 "$CORRAL" delete pods

# HTTPS and a token from a kubeconfig; --server and --token over it.
stop_server
unset CORRAL_SERVER
make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data2" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
write_kubeconfig "$TMP/kc" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
expect_exit 0 "$CORRAL" get ns --kubeconfig "$TMP/kc"
expect_out "kube-public"
KUBECONFIG="$TMP/missing:$TMP/kc" expect_exit 0 "$CORRAL" get clusterroles
expect_out "cluster-admin"
expect_exit 1 "$CORRAL" get pods --kubeconfig "$TMP/kc" --token alice-token-0123456789
expect_out 'Error from server (Forbidden): pods is forbidden: User "alice"'
expect_exit 1 "$CORRAL" get pods --server "https://127.0.0.1:$PORT" --token nope --insecure-skip-tls-verify
expect_out "Error from server (Unauthorized): Unauthorized"
expect_exit 1 "$CORRAL" get pods --server "https://127.0.0.1:$PORT" --token admin-token-0123456789
expect_out "cannot reach the API server"
expect_exit 1 "$CORRAL" get pods --kubeconfig "$TMP/nope"
expect_out "nope"
printf 'apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts: []\n' >"$TMP/bad.kc"
expect_exit 1 "$CORRAL" get pods --kubeconfig "$TMP/bad.kc"
expect_out 'context "x" not found'
finish
