# Today's kubectl (the system's 1.32) against `corral apiserver`: KServe's
# serving.kserve.io/v1alpha1 ServingRuntime, ClusterServingRuntime,
# LocalModelCache, LocalModelNodeGroup and LocalModelNode, and apps/v1
# ControllerRevision: discovery (scope, short names, subresources), create,
# get with the upstream printer columns, the status subresource, explain,
# validation errors, apply, delete.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

KUBECTL=/usr/bin/kubectl
if [ ! -x "$KUBECTL" ]; then
    echo "no system kubectl"
    exit 77
fi

make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
write_kubeconfig "$TMP/admin.kubeconfig" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
K() { "$KUBECTL" --kubeconfig "$TMP/admin.kubeconfig" --request-timeout=20s "$@"; }

# --- discovery ----------------------------------------------------------------------------------
expect_exit 0 K api-resources --api-group=serving.kserve.io
expect_out "servingruntimes"
expect_out "clusterservingruntimes"
expect_out "inferenceservices"
printf '%s\n' "$OUT" | grep -E '^localmodelcaches +serving.kserve.io/v1alpha1 +false +LocalModelCache' >/dev/null ||
    fail "localmodelcaches not cluster-scoped: $OUT"
printf '%s\n' "$OUT" | grep -E '^servingruntimes +serving.kserve.io/v1alpha1 +true +ServingRuntime' >/dev/null ||
    fail "servingruntimes not namespaced: $OUT"
expect_exit 0 K api-resources --api-group=apps
printf '%s\n' "$OUT" | grep -E '^controllerrevisions +apps/v1 +true +ControllerRevision' >/dev/null ||
    fail "controllerrevisions: $OUT"
expect_exit 0 K get --raw /apis/serving.kserve.io/v1alpha1
expect_out '"name":"localmodelcaches/status"'
expect_out '"name":"localmodelnodes/status"'
case "$OUT" in *'"localmodelnodegroups/status"'* | *'"servingruntimes/status"'*)
    fail "a status subresource KServe's CRDs do not have: $OUT" ;; esac
expect_exit 0 K get --raw /apis/serving.kserve.io
expect_out '"version":"v1beta1"'
expect_out '"version":"v1alpha1"'

# --- create and get -------------------------------------------------------------------------------
cat >"$TMP/runtimes.yaml" <<'EOF'
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: kserve-huggingfaceserver}
spec:
  supportedModelFormats:
  - {name: huggingface, version: "1", autoSelect: true, priority: 1}
  protocolVersions: [v2, v1]
  containers:
  - name: kserve-container
    image: kserve/huggingfaceserver:latest
    args: ["--model_name={{.Name}}", --model_dir=/mnt/models]
    resources: {requests: {cpu: "1", memory: 2Gi}}
---
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: standin}
spec:
  disabled: false
  supportedModelFormats:
  - {name: huggingface, autoSelect: true, priority: 2}
  - {name: standin}
  containers:
  - name: kserve-container
    image: corral
    command: [corral, standin-llm]
  - name: sidecar
    image: busybox
EOF
expect_exit 0 K create -f "$TMP/runtimes.yaml"
expect_out "clusterservingruntime.serving.kserve.io/kserve-huggingfaceserver created"
expect_out "servingruntime.serving.kserve.io/standin created"
expect_exit 0 K get servingruntimes
expect_out "NAME      DISABLED   MODELTYPE             CONTAINERS                 AGE"
expect_out "standin   false      huggingface standin   kserve-container sidecar"
expect_exit 0 K get clusterservingruntime
expect_out "kserve-huggingfaceserver              huggingface   kserve-container"

cat >"$TMP/cache.yaml" <<'EOF'
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelNodeGroup
metadata: {name: gpus}
spec:
  storageLimit: 100Gi
  nodeSelector: {corral.dev/gpu: "true"}
  persistentVolumeSpec:
    local: {path: /var/lib/models}
    nodeAffinity:
      required:
        nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-a]}]
  persistentVolumeClaimSpec: {accessModes: [ReadWriteOnce]}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: llama3}
spec:
  sourceModelUri: file:///models/llama3
  modelSize: 16Gi
  nodeGroups: [gpus]
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelNode
metadata: {name: node-a}
spec:
  localModels:
  - {sourceModelUri: "file:///models/llama3", modelName: llama3, nodeGroup: gpus}
EOF
expect_exit 0 K create -f "$TMP/cache.yaml"
expect_out "localmodelnodegroup.serving.kserve.io/gpus created"
expect_out "localmodelcache.serving.kserve.io/llama3 created"
expect_out "localmodelnode.serving.kserve.io/node-a created"
expect_exit 0 K get localmodelcaches
expect_out "NAME     AGE"
expect_out "llama3"
expect_exit 0 K get localmodelnodegroup gpus -o jsonpath='{.spec.storageLimit}'
[ "$OUT" = 100Gi ] || fail "storageLimit: $OUT"

# status through the status subresource (what the controller and agents do)
expect_exit 0 K patch localmodelnode node-a --subresource=status --type=merge \
    -p '{"status":{"modelStatus":{"llama3":"ModelDownloaded"}}}'
expect_exit 0 K get localmodelnode node-a -o jsonpath='{.status.modelStatus.llama3}'
[ "$OUT" = ModelDownloaded ] || fail "modelStatus: $OUT"
expect_exit 0 K patch localmodelcache llama3 --subresource=status --type=merge \
    -p '{"status":{"copies":{"available":1,"total":1},"nodeStatus":{"node-a":"NodeDownloaded"}}}'
expect_exit 0 K get localmodelcache llama3 -o jsonpath='{.status.copies.available}/{.status.nodeStatus.node-a}'
[ "$OUT" = "1/NodeDownloaded" ] || fail "cache status: $OUT"
expect_exit 1 K patch localmodelcache llama3 --subresource=status --type=merge \
    -p '{"status":{"nodeStatus":{"node-a":"Downloaded"}}}'
expect_out 'unsupported value "Downloaded"'

# --- ControllerRevision ----------------------------------------------------------------------------
cat >"$TMP/rev.yaml" <<'EOF'
apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: llama-predictor-00001
  labels: {serving.kserve.io/inferenceservice: llama, component: predictor}
  ownerReferences:
  - {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: llama, uid: u-1, controller: true}
revision: 1
data:
  metadata: {labels: {app: isvc.llama-predictor}}
  spec: {containers: [{name: kserve-container, image: corral}]}
EOF
expect_exit 0 K create -f "$TMP/rev.yaml"
expect_out "controllerrevision.apps/llama-predictor-00001 created"
expect_exit 0 K get controllerrevisions
expect_out "NAME                    CONTROLLER                                 REVISION   AGE"
expect_out "llama-predictor-00001   inferenceservice.serving.kserve.io/llama   1"
expect_exit 0 K get controllerrevision llama-predictor-00001 -o jsonpath='{.data.spec.containers[0].image}'
[ "$OUT" = corral ] || fail "revision data: $OUT"

# --- explain (OpenAPI v3) ----------------------------------------------------------------------------
expect_exit 0 K explain servingruntime.spec.supportedModelFormats
expect_out "autoSelect"
expect_out "priority"
expect_exit 0 K explain localmodelcache.status
expect_out "nodeStatus"
expect_exit 0 K explain controllerrevision
expect_out "revision"

# --- validation --------------------------------------------------------------------------------------
cat >"$TMP/bad.yaml" <<'EOF'
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: bad}
spec:
  supportedModelFormats:
  - {name: huggingface, autoSelect: true, priority: 0}
  - {autoSelect: true}
---
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: bad}
spec:
  sourceModelUri: /models/x
  nodeGroups: []
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: bad}
revision: -1
EOF
expect_exit 1 K create -f "$TMP/bad.yaml"
expect_out "priority: Invalid value: 0: must be 1 or more"
expect_out "supportedModelFormats[1].name: Required value"
expect_out "spec.containers: Required value"
expect_out 'has no scheme; for a path on the node write `file:///models/x`'
expect_out "nodeGroups: should have at least 1 items"
expect_out "spec.modelSize: Required value"
expect_out "data: Required value"
expect_out "revision: Invalid value: -1"

# --- apply and delete ----------------------------------------------------------------------------------
sed -i 's/disabled: false/disabled: true/' "$TMP/runtimes.yaml"
expect_exit 0 K apply -f "$TMP/runtimes.yaml"
expect_out "servingruntime.serving.kserve.io/standin configured"
expect_exit 0 K get servingruntime standin -o jsonpath='{.spec.disabled}'
[ "$OUT" = true ] || fail "disabled after apply: $OUT"
expect_exit 0 K delete -f "$TMP/cache.yaml"
expect_out 'localmodelcache.serving.kserve.io "llama3" deleted'
expect_exit 0 K delete controllerrevision llama-predictor-00001
expect_exit 0 K delete servingruntime standin
expect_exit 0 K delete clusterservingruntime kserve-huggingfaceserver
expect_exit 0 K get servingruntimes,localmodelcaches,controllerrevisions -A
expect_out "No resources found"

finish
