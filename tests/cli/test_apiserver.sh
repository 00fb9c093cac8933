# corral apiserver as a user runs it: start it on an empty directory, drive it
# with curl (create, get, list, bind, watch, delete), check that docs/api.md
# matches the route table, that a second server cannot share the directory,
# and that data survives a restart.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

# The route table and docs/api.md must agree.
expect_exit 0 "$CORRAL" apiserver --print-routes
if ! diff <("$CORRAL" apiserver --print-routes) docs/api.md >"$TMP/diff"; then
    fail "docs/api.md is stale; regenerate it with: build/corral apiserver --print-routes > docs/api.md
$(head -20 "$TMP/diff")"
fi
expect_exit 2 "$CORRAL" apiserver
expect_out "--data-dir DIR is required"
expect_exit 2 "$CORRAL" apiserver --data-dir "$TMP/x" --threads zero
expect_exit 1 "$CORRAL" apiserver --data-dir "$TMP/x" --listen nonsense
expect_out "HOST:PORT"

start_server "$TMP/data"
expect_call 200 GET /healthz
[ "$BODY" = ok ] || fail "healthz: $BODY"
expect_call 200 GET /version
expect_body '"gitVersion"'
expect_call 200 GET /api/v1
expect_body '"name":"pods/binding"'

expect_call 201 POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}'
expect_call 201 POST /api/v1/namespaces/ml/pods "apiVersion: v1
kind: Pod
metadata:
  name: train
  labels: {team: ml}
spec:
  containers:
  - name: c
    image: pytorch:2
    resources:
      limits: {nvidia.com/gpu: 2}
" application/yaml
expect_body '"uid"'
expect_body '"restartPolicy":"Always"'
expect_call 409 POST /api/v1/namespaces/ml/pods '{"metadata":{"name":"train"},"spec":{"containers":[{"name":"c","image":"i"}]}}'
expect_body '"reason":"AlreadyExists"'
expect_call 422 POST /api/v1/namespaces/ml/pods '{"metadata":{"name":"bad"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":0.5}}}]}}'
expect_body 'corral.dev/gpu-milli: 500'

# A watch sees the binding, then the stream ends at its timeout.
curl -sN "$API/api/v1/namespaces/ml/pods?watch=1&timeoutSeconds=2" >"$TMP/watch" &
watch_pid=$!
sleep 0.3
expect_call 201 POST /api/v1/namespaces/ml/pods/train/binding '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"train","annotations":{"corral.dev/gpu-ids":"0,1"}},"target":{"kind":"Node","name":"gpu-node-1"}}'
expect_body '"status":"Success"'
expect_call 409 POST /api/v1/namespaces/ml/pods/train/binding '{"metadata":{"name":"train"},"target":{"name":"other"}}'
wait "$watch_pid"
grep -q '"type":"ADDED"' "$TMP/watch" || fail "watch: no ADDED event: $(cat "$TMP/watch")"
grep -q '"type":"MODIFIED".*"nodeName":"gpu-node-1"' "$TMP/watch" || fail "watch: no binding: $(cat "$TMP/watch")"

expect_call 200 GET "/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-node-1&labelSelector=team%3Dml"
expect_body '"name":"train"'
expect_body '"corral.dev/gpu-ids":"0,1"'

# A bound pod is deleted gracefully, then for good when its agent confirms.
expect_call 200 DELETE /api/v1/namespaces/ml/pods/train
expect_body '"deletionTimestamp"'
expect_call 200 DELETE '/api/v1/namespaces/ml/pods/train?gracePeriodSeconds=0'
expect_call 404 GET /api/v1/namespaces/ml/pods/train
expect_body '"reason":"NotFound"'

# Volcano and KServe objects from the reference manifests.
expect_call 201 POST /apis/scheduling.volcano.sh/v1beta1/queues "$(sed -n '/^---$/q;p' examples/queues.yaml)" application/yaml
expect_call 200 GET /apis/scheduling.volcano.sh/v1beta1/queues
expect_body '"name":"default"'

# One server per data directory.
expect_exit 1 "$CORRAL" apiserver --data-dir "$TMP/data" --listen 127.0.0.1:0
expect_out "in use by another corral apiserver"

# Data survives a restart; the revision counter continues.
call GET /api/v1/namespaces/ml
rv_before=$(printf '%s' "$BODY" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p')
stop_server
start_server "$TMP/data"
expect_call 200 GET /api/v1/namespaces/ml
expect_body "\"resourceVersion\":\"$rv_before\""
expect_call 201 POST /api/v1/namespaces/ml/configmaps '{"metadata":{"name":"after"}}'
rv_after=$(printf '%s' "$BODY" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p')
[ "$rv_after" -gt "$rv_before" ] || fail "revision went back: $rv_after <= $rv_before"
stop_server
grep -q "SIGTERM, shutting down" "$TMP/server.log" || fail "no clean shutdown: $(cat "$TMP/server.log")"

finish
