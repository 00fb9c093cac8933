# The kinds a Kubernetes install's manifests use (docs/kubernetes.md): every
# kind of the deploy manifests' list passes `kubectl apply --dry-run=server`
# (client-side and server-side apply) with Debian's kubectl 1.20 (client-side
# validation against /openapi/v2, dry-run support read from its paths) and
# the system's 1.32 (fieldValidation=Strict), for a new object and for a
# changed existing one, nothing stored and no watch event; apps/v1
# Deployment and DaemonSet and CustomResourceDefinition validation (422
# with upstream's messages), the CRD Warning, Established status, the
# Deployment's scale subresource and explain.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

find_kubectl
K120=$KUBECTL
K132=""
if [ -x /usr/bin/kubectl ] && /usr/bin/kubectl version --client 2>/dev/null | grep -q 'Client Version: v1\.\(2[7-9]\|[3-9][0-9]\)\.'; then
    K132=/usr/bin/kubectl
fi

start_server "$TMP/data"
write_kubeconfig "$TMP/kc" "$API" unused
K() { "$1" --kubeconfig "$TMP/kc" --request-timeout=20s "${@:2}"; }

cat >"$TMP/all.yaml" <<'EOF'
apiVersion: v1
kind: ServiceAccount
metadata: {name: corral-scheduler, namespace: corral-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: corral-config, namespace: corral-system}
data: {config.yaml: "schedulerName: corral\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: corral-token, namespace: corral-system}
stringData: {token: abc}
---
apiVersion: v1
kind: Service
metadata: {name: corral-router, namespace: corral-system}
spec:
  selector: {app: corral-router}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: corral-scheduler}
rules:
- apiGroups: [""]
  resources: [pods/binding]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: corral-scheduler}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: corral-scheduler}
subjects: [{kind: ServiceAccount, name: corral-scheduler, namespace: corral-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: corral-leader, namespace: corral-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: corral-leader, namespace: corral-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: corral-leader}
subjects: [{kind: ServiceAccount, name: corral-scheduler, namespace: corral-system}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: corral-scheduler, namespace: corral-system, labels: {app: corral-scheduler}}
spec:
  replicas: 2
  selector: {matchLabels: {app: corral-scheduler}}
  template:
    metadata: {labels: {app: corral-scheduler}}
    spec:
      serviceAccountName: corral-scheduler
      priorityClassName: corral-critical
      containers:
      - name: scheduler
        image: ghcr.io/corral-dev/corral:latest
        args: [scheduler, --leader-elect=true]
        ports: [{name: metrics, containerPort: 10259}]
        readinessProbe: {httpGet: {path: /healthz, port: metrics}}
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: corral-agent, namespace: corral-system}
spec:
  selector: {matchLabels: {app: corral-agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: corral-agent}}
    spec:
      nodeSelector: {nvidia.com/gpu.present: "true"}
      tolerations: [{operator: Exists}]
      hostPID: true
      containers:
      - name: agent
        image: ghcr.io/corral-dev/corral:latest
        args: [agent, --kube]
        env: [{name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
        securityContext: {privileged: true}
        volumeMounts: [{name: device-plugins, mountPath: /var/lib/kubelet/device-plugins}]
      volumes: [{name: device-plugins, hostPath: {path: /var/lib/kubelet/device-plugins}}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: corral-critical}
value: 1000000
description: Corral's own components.
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 2, reclaimable: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: queues.scheduling.volcano.sh}
spec:
  group: scheduling.volcano.sh
  names: {kind: Queue, listKind: QueueList, plural: queues, shortNames: [q], singular: queue}
  scope: Cluster
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns: [{name: Weight, type: integer, jsonPath: .spec.weight}]
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              weight: {type: integer, format: int32, default: 1, minimum: 1}
              state: {type: string, enum: [Open, Closed]}
              capability:
                type: object
                additionalProperties: {anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
EOF
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: corral-system}\n' >"$TMP/ns.yaml"

for KC in $K120 $K132; do
    v=$(K "$KC" version --client 2>/dev/null | sed -n 's/.*Client Version: \(v[0-9.]*\).*/\1/p;s/.*GitVersion:"\(v[0-9.]*\).*/\1/p' | head -1)
    # A namespace that does not exist: dry-run answers 404 as kube-apiserver.
    expect_exit 0 K "$KC" apply --dry-run=server -f "$TMP/ns.yaml"
    expect_out "namespace/corral-system created (server dry run)"
    expect_exit 1 K "$KC" apply --dry-run=server -f "$TMP/all.yaml"
    expect_out 'namespaces "corral-system" not found'
done
# Nothing was stored by the dry runs.
expect_call 404 GET /api/v1/namespaces/corral-system
expect_call 404 GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com

expect_exit 0 K "$K120" create -f "$TMP/ns.yaml"
rv0=$(jv /api/v1/namespaces/corral-system "o['metadata']['resourceVersion']")
# A watch from now must see no event from the dry runs below.
curl -sN --max-time 60 "$API/apis/apps/v1/deployments?watch=1&resourceVersion=$rv0" >"$TMP/watch.out" &
WATCH_PID=$!
for KC in $K120 $K132; do
    for mode in "" "--server-side"; do
        expect_exit 0 K "$KC" apply $mode --dry-run=server -f "$TMP/all.yaml"
        for what in serviceaccount/corral-scheduler configmap/corral-config secret/corral-token \
            service/corral-router clusterrole.rbac.authorization.k8s.io/corral-scheduler \
            clusterrolebinding.rbac.authorization.k8s.io/corral-scheduler \
            role.rbac.authorization.k8s.io/corral-leader rolebinding.rbac.authorization.k8s.io/corral-leader \
            deployment.apps/corral-scheduler daemonset.apps/corral-agent \
            priorityclass.scheduling.k8s.io/corral-critical queue.scheduling.volcano.sh/research \
            customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh \
            customresourcedefinition.apiextensions.k8s.io/widgets.example.com; do
            expect_out "$what"
        done
        expect_out "(server dry run)"
        expect_out "Warning: objects of this CRD are not served by corral apiserver"
    done
done
expect_call 404 GET /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler
expect_call 404 GET /apis/scheduling.volcano.sh/v1beta1/queues/research

# Create for real (client-side apply), then dry-run a changed object.
expect_exit 0 K "$K120" apply -f "$TMP/all.yaml"
expect_out "deployment.apps/corral-scheduler created"
rv=$(jv /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler "o['metadata']['resourceVersion']")
sed 's/replicas: 2/replicas: 5/' "$TMP/all.yaml" >"$TMP/changed.yaml"
awk '/^---$/{n++; next} n==8' "$TMP/changed.yaml" >"$TMP/deploy.yaml"
grep -q "kind: Deployment" "$TMP/deploy.yaml" || fail "deploy.yaml: $(cat "$TMP/deploy.yaml")"
for KC in $K120 $K132; do
    expect_exit 0 K "$KC" apply --dry-run=server -f "$TMP/changed.yaml"
    expect_out "deployment.apps/corral-scheduler configured (server dry run)"
    expect_exit 0 K "$KC" apply --dry-run=server -f "$TMP/deploy.yaml" \
        -o jsonpath='{.spec.replicas}/{.metadata.generation}'
    case "$OUT" in *5/2*) ;; *) fail "dry-run update does not answer the would-be object: $OUT" ;; esac
    expect_exit 1 K "$KC" diff -f "$TMP/deploy.yaml" # 1: differences found
    expect_out "+  replicas: 5"
done
[ -n "$K132" ] && {
    expect_exit 0 K "$K132" apply --server-side --force-conflicts --dry-run=server -f "$TMP/changed.yaml"
    expect_out "deployment.apps/corral-scheduler serverside-applied (server dry run)"
}
got=$(jv /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler "'%s/%s' % (o['spec']['replicas'], o['metadata']['resourceVersion'])")
[ "$got" = "2/$rv" ] || fail "a dry run changed the stored Deployment: $got (want 2/$rv)"
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
n=$(grep -c '"type"' "$TMP/watch.out")
[ "$n" = 1 ] || fail "watch saw $n events, want only the real create: $(cat "$TMP/watch.out")"

# --- what is stored ---------------------------------------------------------------------------------
expect_exit 0 K "$K132" get -n corral-system deploy,ds
expect_out "READY"
expect_out "corral-scheduler   0/2"
expect_out "NODE SELECTOR"
jv /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler \
    "o['spec']['strategy'], o['spec']['revisionHistoryLimit'], o['spec']['template']['spec']['restartPolicy']" >"$TMP/d"
grep -qF "{'type': 'RollingUpdate', 'rollingUpdate': {'maxUnavailable': '25%', 'maxSurge': '25%'}} 10 Always" "$TMP/d" ||
    [ "$(cat "$TMP/d")" = "({'type': 'RollingUpdate', 'rollingUpdate': {'maxUnavailable': '25%', 'maxSurge': '25%'}}, 10, 'Always')" ] ||
    fail "deployment defaults: $(cat "$TMP/d")"
[ "$(jv /apis/apiextensions.k8s.io/v1/customresourcedefinitions/queues.scheduling.volcano.sh \
    "[c['status'] for c in o['status']['conditions'] if c['type'] == 'Established'][0]")" = True ] ||
    fail "a CRD of a served kind is not Established"
[ "$(jv /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com \
    "[c['status'] for c in o['status']['conditions'] if c['type'] == 'Established'][0]")" = False ] ||
    fail "a CRD of a kind Corral does not serve is Established"
expect_exit 0 K "$K132" wait --for=condition=Established --timeout=5s crd/queues.scheduling.volcano.sh
# The Queue kind is unchanged by its CRD: still validated by Corral.
expect_call 422 POST /apis/scheduling.volcano.sh/v1beta1/queues '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"bad"},"spec":{"weight":-1}}'

# --- scale ---------------------------------------------------------------------------------------
expect_exit 0 K "$K132" scale -n corral-system deploy/corral-scheduler --replicas=3
expect_call 200 GET /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler/scale
expect_body '"replicas":3'
expect_body '"selector":"app=corral-scheduler"'

# --- validation ------------------------------------------------------------------------------------
cat >"$TMP/bad.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad, namespace: corral-system}
spec:
  replicas: -1
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: other}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: thing}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: array}}}
EOF
for KC in $K120 $K132; do
    expect_exit 1 K "$KC" apply --dry-run=server -f "$TMP/bad.yaml"
    expect_out 'Deployment.apps "bad" is invalid'
    expect_out 'spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    expect_out '`selector` does not match template `labels`'
    expect_out 'spec.template.spec.restartPolicy: Unsupported value: "Never"'
    expect_out 'CustomResourceDefinition.apiextensions.k8s.io "things.example.com" is invalid'
    expect_out 'metadata.name: Invalid value: "things.example.com": must be spec.names.plural+"."+spec.group'
    expect_out 'must be object at the root'
done

# --- OpenAPI: explain and the paths kubectl 1.20 reads for dry-run support ------------------------
expect_exit 0 K "$K132" explain deployment.spec.strategy
expect_out "rollingUpdate"
expect_exit 0 K "$K120" explain daemonset.spec.updateStrategy
expect_out "rollingUpdate"
expect_exit 0 K "$K120" explain crd.spec.versions.schema
expect_out "openAPIV3Schema"
call GET /openapi/v2
printf '%s' "$BODY" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
assert p["x-kubernetes-group-version-kind"]["kind"] == "Deployment", p
assert any(x["name"] == "dryRun" and x["in"] == "query" for x in p["parameters"]), p
assert "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition" in d["definitions"]
' || fail "/openapi/v2 lacks the Deployment patch path with dryRun"

finish
