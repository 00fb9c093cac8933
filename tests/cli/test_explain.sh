# kubectl explain against `corral apiserver`: the system kubectl (1.32,
# OpenAPI v3: /openapi/v3 and the group-version documents) for the Volcano
# and KServe kinds, and pod.spec.containers once the k8s.io/api schemas are
# in the server's table; Debian's kubectl 1.20 (OpenAPI v2 as gnostic
# protobuf) for a Volcano kind and its client-side validation. Skips (77)
# only when neither kubectl is here.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

K132=""
if [ -x /usr/bin/kubectl ] && /usr/bin/kubectl version --client 2>/dev/null | grep -q 'Client Version: v1\.\(2[7-9]\|[3-9][0-9]\)\.'; then
    K132=/usr/bin/kubectl
fi
K120=""
[ -x build/deps/kubernetes-client/usr/bin/kubectl ] && K120=build/deps/kubernetes-client/usr/bin/kubectl
if [ -z "$K132" ] && [ -z "$K120" ]; then
    echo "no kubectl here (system kubectl >= 1.27 or build/deps/kubernetes-client)"
    exit 77
fi

start_server "$TMP/data"
cat >"$TMP/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: corral, cluster: {server: "$API"}}]
users: [{name: u, user: {}}]
contexts: [{name: corral, context: {cluster: corral, user: u}}]
current-context: corral
EOF
# Own cache: kubectl keeps discovery and OpenAPI per host:port.
K() { "$KUBECTL" --kubeconfig "$TMP/kubeconfig" --cache-dir "$TMP/cache" --request-timeout=20s "$@"; }

# Does the server describe core v1 Pod's fields (the k8s.io/api table)?
HAS_POD=0
python3 - "$API" <<'EOF' && HAS_POD=1
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/openapi/v2", timeout=20) as r:
    d = json.load(r)["definitions"].get("io.k8s.api.core.v1.Pod", {})
sys.exit(0 if "properties" in d else 1)
EOF
[ "$HAS_POD" = 1 ] || echo "note: the server has no io.k8s.api.core.v1.Pod schema yet; pod.spec.containers not checked"

if [ -n "$K132" ]; then
    KUBECTL=$K132
    expect_exit 0 K explain vcjob.spec.tasks
    expect_out "KIND:       Job"
    expect_out "FIELD: tasks <[]TaskSpec>"
    expect_out "replicas	<integer>"
    expect_out "template	<"
    expect_out "The number of pods the task runs."
    expect_exit 0 K explain inferenceservice.spec.predictor
    expect_out "GROUP:      serving.kserve.io"
    expect_out "FIELD: predictor <PredictorSpec>"
    expect_out "model	<ModelSpec>"
    expect_out "minReplicas	<integer>"
    expect_exit 0 K explain inferenceservice.spec.predictor.model.modelFormat
    expect_out "name	<string>"
    expect_exit 0 K explain queue.spec
    expect_out "capability	<map[string]Quantity>"
    expect_out "reclaimable	<boolean>"
    expect_exit 0 K explain hypernode.spec.members.selector
    expect_out "exactMatch	<ExactMatch>"
    expect_exit 1 K explain queue.spec.nosuchfield
    expect_out 'field "nosuchfield" does not exist'
    if [ "$HAS_POD" = 1 ]; then
        expect_exit 0 K explain pod.spec.containers
        expect_out "FIELD: containers <[]Container>"
        expect_out "image	<string>"
        expect_exit 0 K explain vcjob.spec.tasks.template.spec.containers
        expect_out "image	<string>"
    else
        # A served kind without a schema is named (explain finds it), with no fields.
        expect_exit 0 K explain pod
        expect_out "KIND:       Pod"
    fi
    # The documents tell kubectl 1.32 that the server takes fieldValidation,
    # so it leaves unknown fields to the server's strict decoding.
    expect_exit 0 K get --raw /openapi/v3/apis/scheduling.volcano.sh/v1beta1
    expect_out '"fieldValidation"'
    # Every reference manifest passes kubectl 1.32's client-side validation.
    expect_exit 0 K create -f examples/ -f examples/quickstart/
    expect_out "job.batch.volcano.sh/llama-finetune created"
fi

if [ -n "$K120" ]; then
    KUBECTL=$K120
    # kubectl 1.20 validates on the client (OpenAPI v2): a field the schema
    # does not name is refused before anything is sent.
    cat >"$TMP/bad.yaml" <<'EOF'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: bad}
spec: {weight: 1, wieght: 2}
EOF
    expect_exit 1 K create -f "$TMP/bad.yaml"
    expect_out 'unknown field "wieght" in sh.volcano.scheduling.v1beta1.QueueSpec'
    expect_exit 0 K create --dry-run=client -f examples/ -f examples/quickstart/
    expect_exit 0 K explain vcjob.spec.tasks.policies
    expect_out "VERSION:  batch.volcano.sh/v1alpha1"
    expect_out "RESOURCE: policies <[]Object>"
    expect_out "exitCode	<integer>"
    expect_exit 0 K explain hypernode.spec
    expect_out "tier	<integer>"
    expect_exit 0 K explain isvc.spec.predictor.model.storageUri
    expect_out "FIELD:    storageUri <string>"
    if [ "$HAS_POD" = 1 ]; then
        expect_exit 0 K explain pod.spec.containers
        expect_out "RESOURCE: containers <[]Object>"
        expect_out "image	<string>"
    fi
fi
finish
