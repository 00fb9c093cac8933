# Server-side apply, managedFields, dry runs and field validation as today's
# clients use them, against `corral apiserver`: the system kubectl (1.32)
# for apply --server-side (create, update, conflict, force, field removal,
# two managers), diff --server-side, the client-side to server-side apply
# migration, --dry-run=server for create/apply/delete and diff (nothing
# stored), and fieldValidation=Strict; Debian's kubectl 1.20 for a server-
# side apply; the Python client's raw apply patch. Skipped (77) only when
# the system kubectl is absent.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT
[ -x /usr/bin/kubectl ] || { echo "no system kubectl"; exit 77; }

start_server "$TMP/data"
write_kubeconfig "$TMP/kc" "$API" unused-token
K() { /usr/bin/kubectl --kubeconfig "$TMP/kc" --request-timeout=20s "$@"; }

cm() { # cm NAME DATA-YAML...: a ConfigMap manifest on stdout
    local name=$1
    shift
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n' "$name"
    for kv in "$@"; do printf '  %s\n' "$kv"; done
}

# apply --server-side: create, update, a second manager, conflict, force.
cm s1 'a: "1"' 'b: "2"' >"$TMP/s1.yaml"
expect_exit 0 K apply --server-side -f "$TMP/s1.yaml"
expect_out "configmap/s1 serverside-applied"
expect_exit 0 K get cm s1 -o yaml --show-managed-fields
expect_out "manager: kubectl"
expect_out "operation: Apply"
expect_out "f:a: {}"
cm s1 'a: "1"' 'b: "2"' 'c: "3"' >"$TMP/s1.yaml"
expect_exit 0 K apply --server-side -f "$TMP/s1.yaml"
expect_exit 0 K get cm s1 -o jsonpath='{.data.c}'
expect_out "3"
cm s1 'a: "9"' >"$TMP/other.yaml"
expect_exit 1 K apply --server-side --field-manager=other -f "$TMP/other.yaml"
expect_out 'Apply failed with 1 conflict: conflict with "kubectl": .data.a'
expect_exit 0 K apply --server-side --field-manager=other --force-conflicts -f "$TMP/other.yaml"
expect_exit 0 K get cm s1 -o jsonpath='{.data.a}'
expect_out "9"
# kubectl stops applying b and c: they go; a now belongs to "other" and stays.
cm s1 'z: "0"' >"$TMP/s1.yaml"
expect_exit 0 K apply --server-side -f "$TMP/s1.yaml"
expect_exit 0 K get cm s1 -o jsonpath='{.data}'
expect_out '"a":"9"'
expect_out '"z":"0"'
[[ "$OUT" != *'"b"'* && "$OUT" != *'"c"'* ]] || fail "b and c not removed: $OUT"

# diff --server-side previews without writing.
cm s1 'z: "1"' >"$TMP/s1b.yaml"
expect_exit 1 K diff --server-side -f "$TMP/s1b.yaml"
expect_out '+  z: "1"'
expect_exit 0 K get cm s1 -o jsonpath='{.data.z}'
[ "$OUT" = "0" ] || fail "diff --server-side wrote: $OUT"

# Client-side apply, then server-side: kubectl migrates the fields.
cm m1 'a: "1"' >"$TMP/m1.yaml"
expect_exit 0 K apply -f "$TMP/m1.yaml"
expect_exit 0 K get cm m1 -o yaml --show-managed-fields
expect_out "manager: kubectl-client-side-apply"
cm m1 'a: "2"' >"$TMP/m1.yaml"
expect_exit 0 K apply --server-side -f "$TMP/m1.yaml"
expect_exit 0 K get cm m1 -o yaml --show-managed-fields
expect_out "operation: Apply"
[[ "$OUT" != *kubectl-client-side-apply* ]] || fail "client-side manager left: $OUT"
expect_out 'a: "2"'

# --dry-run=server and client-side diff store nothing.
cm d1 'a: "1"' >"$TMP/d1.yaml"
expect_exit 0 K create --dry-run=server -f "$TMP/d1.yaml"
expect_out "(server dry run)"
expect_exit 0 K apply --dry-run=server -f "$TMP/d1.yaml"
expect_exit 0 K apply --server-side --dry-run=server -f "$TMP/d1.yaml"
expect_exit 1 K diff -f "$TMP/d1.yaml"
expect_exit 1 K get cm d1
expect_out "NotFound"
expect_exit 0 K delete --dry-run=server cm m1
expect_out "(server dry run)"
expect_exit 0 K get cm m1

# fieldValidation=Strict (kubectl 1.32's default): unknown fields are refused.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1\nbogus: 1\n' >"$TMP/bad.yaml"
expect_exit 1 K create -f "$TMP/bad.yaml"
expect_out 'strict decoding error: unknown field "bogus"'
expect_exit 0 K create --validate=false -f "$TMP/bad.yaml"

# Debian's kubectl 1.20: server-side apply too.
OLD=build/deps/kubernetes-client/usr/bin/kubectl
[ -x "$OLD" ] || OLD=/work/main/build/deps/kubernetes-client/usr/bin/kubectl
if [ -x "$OLD" ]; then
    cm old 'a: "1"' >"$TMP/old.yaml"
    expect_exit 0 "$OLD" --kubeconfig "$TMP/kc" apply --server-side -f "$TMP/old.yaml"
    expect_out "serverside-applied"
fi

# The Python client: a raw apply patch and a conflict.
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
    expect_exit 0 timeout 60 /usr/bin/python3 - "$TMP/kc" <<'PY'
import json, sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
api = client.ApiClient()
body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py"}, "data": {"k": "v"}}
def apply(manager, body, force=False):
    q = [("fieldManager", manager)] + ([("force", "true")] if force else [])
    return api.call_api("/api/v1/namespaces/default/configmaps/py", "PATCH", query_params=q,
                        header_params={"Content-Type": "application/apply-patch+yaml",
                                       "Accept": "application/json"},
                        body=json.dumps(body), response_type="object", _return_http_data_only=True)
out = apply("py", body)
assert out["data"]["k"] == "v", out
assert out["metadata"]["managedFields"][0]["manager"] == "py", out
body["data"]["k"] = "w"
try:
    apply("py2", body)
    raise SystemExit("no conflict")
except client.exceptions.ApiException as e:
    assert e.status == 409 and "FieldManagerConflict" in e.body, e.body
print("python ok")
PY
    expect_out "python ok"
fi
finish
