# deploy/kubernetes, checked without a cluster (docs/kubernetes.md):
#   - `kubectl kustomize` renders the base and every overlay with both
#     kubectls (/usr/bin/kubectl where it is a newer one, and Debian's 1.20,
#     whose kustomize 2.0.3 has no `components`, `labels` or `patches`), to
#     the same objects;
#   - the CRDs are what tools/gen_crds.py makes from this binary's API
#     server (regenerated into $TMP, diffed);
#   - the contents (tests/deploy/kube_manifests.py check): kinds, namespace,
#     image, replicas, leader election, the agent's GPU nodes and hostPaths,
#     every flag known to `corral CMD --help`, RBAC rule for rule as
#     deploy/rbac's, the dashboards, sizes under kubectl apply's limit;
#   - `corral validate --strict` accepts every object (the workloads' pod
#     templates also as Pods);
#   - `kubectl apply --dry-run=server` of the whole rendering against
#     `corral apiserver --strict` succeeds with both kubectls and stores
#     nothing, and a Deployment whose selector does not match its template
#     is refused.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
# Debian's python3 with python3-yaml (tools/deps.sh test installs it).
PYTHON=/usr/bin/python3
if ! "$PYTHON" -c 'import yaml' 2>/dev/null; then
    echo "python3-yaml is not installed"
    exit 77
fi
find_kubectl
trap 'stop_server; rm -rf "$TMP"' EXIT
K=deploy/kubernetes
km() { "$PYTHON" tests/deploy/kube_manifests.py "$@"; }

# The kubectls: Debian's (1.20) and /usr/bin/kubectl when it is another one.
KUBECTLS=("$KUBECTL")
if [ -x /usr/bin/kubectl ] && [ "$(readlink -f /usr/bin/kubectl)" != "$(readlink -f "$KUBECTL")" ]; then
    KUBECTLS+=(/usr/bin/kubectl)
fi
echo "kubectls: ${KUBECTLS[*]}"

# --- rendering ---
for dir in "$K" "$K/overlays/beside-volcano" "$K/overlays/beside-kserve" "$K/overlays/prometheus-operator"; do
    tag=$(basename "$dir")
    i=0
    for k in "${KUBECTLS[@]}"; do
        "$k" kustomize "$dir" >"$TMP/$tag.$i.yaml" 2>"$TMP/$tag.$i.err" ||
            fail "$k kustomize $dir: $(cat "$TMP/$tag.$i.err")"
        [ "$i" -gt 0 ] && { expect_exit 0 km same "$TMP/$tag.0.yaml" "$TMP/$tag.$i.yaml"; }
        i=$((i + 1))
    done
done
R=$TMP/kubernetes.0.yaml
crds_in() { km crds "$1"; }
all_crds=$(crds_in "$R")
case "$(crds_in "$TMP/beside-volcano.0.yaml")" in
*volcano*) fail "beside-volcano renders Volcano's CRDs" ;;
*serving.kserve.io*) ;;
*) fail "beside-volcano lacks the KServe CRDs" ;;
esac
case "$(crds_in "$TMP/beside-kserve.0.yaml")" in
*kserve*) fail "beside-kserve renders KServe's CRDs" ;;
*volcano.sh*) ;;
*) fail "beside-kserve lacks the Volcano CRDs" ;;
esac
grep -q '^kind: ServiceMonitor' "$TMP/prometheus-operator.0.yaml" || fail "no ServiceMonitor in prometheus-operator"
grep -q '^kind: PodMonitor' "$TMP/prometheus-operator.0.yaml" || fail "no PodMonitor in prometheus-operator"
[ "$(echo "$all_crds" | wc -w)" = 12 ] || fail "CRDs rendered: $all_crds"

# --- the CRDs are generated, and up to date ---
expect_exit 0 "$PYTHON" tools/gen_crds.py --corral "$CORRAL" --out "$TMP/crds"
expect_out "12 CRDs written"
diff -r "$K/crds" "$TMP/crds" >"$TMP/crds.diff" ||
    fail "deploy/kubernetes/crds is not what tools/gen_crds.py makes now (run it and commit):
$(head -40 "$TMP/crds.diff")"
# ... and the comparison can fail.
cp -r "$TMP/crds" "$TMP/crds-edited"
sed -i 's/shortNames:/shortNames:\n    - edited/' "$TMP/crds-edited/volcano/scheduling.volcano.sh_queues.yaml"
diff -rq "$TMP/crds" "$TMP/crds-edited" >/dev/null && fail "an edited CRD compares equal"

# --- contents ---
expect_exit 0 km check "$R" "$CORRAL"
# ... a broken rendering is caught: a privileged agent, a flag the binary lacks.
sed -e 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' \
    -e 's/--scheduler-name=corral/--scheduler-names=corral/' "$R" >"$TMP/bad.yaml"
expect_exit 1 km check "$TMP/bad.yaml" "$CORRAL"
expect_out "without privilege escalation"
expect_out "has no flag --scheduler-names"

# --- corral validate ---
km pods "$R" >"$TMP/pods.yaml" || fail "pod templates"
expect_exit 0 "$CORRAL" validate --strict -f "$TMP/pods.yaml"
expect_out "ok  Pod/corral-system/corral-agent"
if "$CORRAL" validate -f "$TMP/pods.yaml" -f - <<<'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}' 2>&1 |
    grep -q 'unknown kind "Deployment"'; then
    # This binary predates apps/v1 and CRDs (the strict part): validate the rest.
    echo "note: corral validate has no Deployment, DaemonSet or CRD kinds: those are checked as Pods only"
    km drop Deployment DaemonSet CustomResourceDefinition <"$R" >"$TMP/rest.yaml"
    expect_exit 0 "$CORRAL" validate --strict -f "$TMP/rest.yaml"
else
    expect_exit 0 "$CORRAL" validate --strict -f "$R"
    expect_out "ok  DaemonSet/corral-system/corral-agent"
    expect_out "ok  CustomResourceDefinition/jobs.batch.volcano.sh"
fi
expect_out "ok  ClusterRole/corral:scheduler"

# --- kubectl apply --dry-run=server against corral apiserver --strict ---
start_server "$TMP/data" --strict
write_kubeconfig "$TMP/kubeconfig" "$API" unused
# A namespace must exist before objects are created in it, dry run or not
# (kube-apiserver's NamespaceLifecycle): create corral-system for real.
expect_exit 0 "$KUBECTL" --kubeconfig "$TMP/kubeconfig" apply -f "$K/platform/namespace.yaml"
for k in "${KUBECTLS[@]}"; do
    expect_exit 0 "$k" --kubeconfig "$TMP/kubeconfig" apply --dry-run=server -f "$R"
    expect_out "deployment.apps/corral-scheduler created (server dry run)"
    expect_out "daemonset.apps/corral-agent created (server dry run)"
    expect_out "customresourcedefinition.apiextensions.k8s.io/jobs.batch.volcano.sh created (server dry run)"
    expect_out "clusterrole.rbac.authorization.k8s.io/corral:agent created (server dry run)"
    # beside-volcano and beside-kserve too
    expect_exit 0 "$k" --kubeconfig "$TMP/kubeconfig" apply --dry-run=server -f "$TMP/beside-volcano.0.yaml"
    expect_exit 0 "$k" --kubeconfig "$TMP/kubeconfig" apply --dry-run=server -f "$TMP/beside-kserve.0.yaml"
    # nothing was stored
    expect_call 404 GET /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler
    expect_call 404 GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobs.batch.volcano.sh
    # a Deployment whose selector does not match its template is refused
    km break "$R" >"$TMP/broken.yaml"
    expect_exit 1 "$k" --kubeconfig "$TMP/kubeconfig" apply --dry-run=server -f "$TMP/broken.yaml"
    expect_out "selector"
done
# ... and applied for real, it is stored (the dry run was the only difference).
expect_exit 0 "$KUBECTL" --kubeconfig "$TMP/kubeconfig" apply -f "$R"
expect_call 200 GET /apis/apps/v1/namespaces/corral-system/deployments/corral-scheduler
stop_server
finish
