#!/usr/bin/env bash
# corral controller against a real corral apiserver: the status of a
# LocalModelCache follows its node group's Nodes and their LocalModelNodes
# (written here as the agents would): nodeStatus per node (NodeNotReady for
# a node not Ready), copies, and the InferenceServices whose storageUri the
# cache holds; an unchanged status is not written again.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/apiserver_lib.bash"
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || exit 77

CTL_PID=""
cleanup() {
    [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null
    [ -n "$CTL_PID" ] && wait "$CTL_PID" 2>/dev/null
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT

KS=/apis/serving.kserve.io/v1alpha1
CACHE=$KS/localmodelcaches/llama

node() { # node NAME READY
    expect_call 201 POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",
      \"metadata\":{\"name\":\"$1\",\"labels\":{\"gpu\":\"true\"}},
      \"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$2\"}]}}"
}
model_node() { # model_node NAME STATUS
    expect_call 201 POST $KS/localmodelnodes "{\"apiVersion\":\"serving.kserve.io/v1alpha1\",
      \"kind\":\"LocalModelNode\",\"metadata\":{\"name\":\"$1\"},
      \"spec\":{\"localModels\":[{\"sourceModelUri\":\"file:///models/llama\",\"modelName\":\"llama\"}]}}"
    expect_call 200 PATCH $KS/localmodelnodes/$1/status \
        "{\"status\":{\"modelStatus\":{\"llama\":\"$2\"}}}" application/merge-patch+json
}

start_server "$TMP/data"
node n1 True
node n2 True
node n3 False
expect_call 201 POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"cpu"},
  "status":{"conditions":[{"type":"Ready","status":"True"}]}}'
expect_call 201 POST $KS/localmodelnodegroups '{"apiVersion":"serving.kserve.io/v1alpha1",
  "kind":"LocalModelNodeGroup","metadata":{"name":"gpus"},
  "spec":{"storageLimit":"10Gi","nodeSelector":{"gpu":"true"}}}'
expect_call 201 POST $KS/localmodelcaches '{"apiVersion":"serving.kserve.io/v1alpha1",
  "kind":"LocalModelCache","metadata":{"name":"llama"},
  "spec":{"sourceModelUri":"file:///models/llama","modelSize":"1Gi","nodeGroups":["gpus"]}}'
model_node n1 ModelDownloaded
model_node n2 ModelDownloading
expect_call 201 POST /apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices \
    '{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"svc"},
  "spec":{"predictor":{"model":{"modelFormat":{"name":"huggingface"},
  "storageUri":"file:///models/llama/8b"}}}}'

"$CORRAL" controller --server "$API" --status-period 100ms --node-monitor-grace-period 1h 2>"$TMP/ctl.log" &
CTL_PID=$!

ST="o['status']"
wait_for "copies" $CACHE "$ST['copies']" "{'available': 1, 'total': 3, 'failed': 0}"
wait_for "nodeStatus" $CACHE "sorted($ST['nodeStatus'].items())" \
    "[('n1', 'NodeDownloaded'), ('n2', 'NodeDownloading'), ('n3', 'NodeNotReady')]"
wait_for "inferenceServices" $CACHE "$ST['inferenceServices']" \
    "[{'namespace': 'default', 'name': 'svc'}]"

# the agent of n2 finishes; n3 becomes Ready without a LocalModelNode yet
expect_call 200 PATCH $KS/localmodelnodes/n2/status '{"status":{"modelStatus":{"llama":"ModelDownloaded"}}}' \
    application/merge-patch+json
expect_call 200 PATCH /api/v1/nodes/n3/status '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' \
    application/merge-patch+json
wait_for "copies after download" $CACHE "$ST['copies']" "{'available': 2, 'total': 3, 'failed': 0}"
wait_for "n3 pending" $CACHE "$ST['nodeStatus']['n3']" "NodeDownloadPending"

# a node leaves the group; the service goes away
expect_call 200 PATCH /api/v1/nodes/n3 '{"metadata":{"labels":{"gpu":null}}}' application/merge-patch+json
expect_call 200 DELETE /apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices/svc
wait_for "n3 gone" $CACHE "sorted($ST['nodeStatus'])" "['n1', 'n2']"
wait_for "no services" $CACHE "'inferenceServices' in $ST" "False"
wait_for "copies after leaving" $CACHE "$ST['copies']" "{'available': 2, 'total': 2, 'failed': 0}"

# settled: no more writes
RV1=$(jv $CACHE "o['metadata']['resourceVersion']")
sleep 1
RV2=$(jv $CACHE "o['metadata']['resourceVersion']")
[ "$RV1" = "$RV2" ] || fail "the status was written again though nothing changed ($RV1 -> $RV2)"

kill -TERM "$CTL_PID"
wait "$CTL_PID"
rc=$?
CTL_PID=""
[ "$rc" = 0 ] || fail "controller exit $rc: $(cat "$TMP/ctl.log")"
finish
