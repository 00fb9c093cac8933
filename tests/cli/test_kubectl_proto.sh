# Today's kubectl (the system one, 1.28 or later) against `corral apiserver`
# over HTTPS with tokens and RBAC: its `create` generators and `auth can-i`
# send protobuf bodies (application/vnd.kubernetes.protobuf), which the
# server decodes and answers in JSON. Each generator runs at -v=8 to check
# the body really went as protobuf, and each object is read back with
# -o json to check its fields; then delete, and can-i for a user RBAC
# denies. Skipped (77) only when there is no kubectl >= 1.28 here.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

KUBECTL=${KUBECTL_NEW:-/usr/bin/kubectl}
minor=$("$KUBECTL" version --client -o json 2>/dev/null |
    python3 -c 'import json,sys,re; v=json.load(sys.stdin)["clientVersion"]; print(int(re.match(r"\d+", v["minor"]).group()) if v["major"] == "1" else 0)' 2>/dev/null)
if [ -z "$minor" ] || [ "$minor" -lt 28 ]; then
    echo "no kubectl 1.28 or later here ($KUBECTL)"
    exit 77
fi

make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
write_kubeconfig "$TMP/admin.kubeconfig" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
write_kubeconfig "$TMP/alice.kubeconfig" "https://127.0.0.1:$PORT" alice-token-0123456789 "$TMP/cert.pem"
K() { "$KUBECTL" --kubeconfig "$TMP/admin.kubeconfig" --request-timeout=20s "$@"; }
A() { "$KUBECTL" --kubeconfig "$TMP/alice.kubeconfig" --request-timeout=20s "$@"; }

# created OUTPUT-LINE CMD...: run a create at -v=8, check it went as protobuf
# and was answered with 201.
created() {
    local line=$1
    shift
    expect_exit 0 K "$@" -v=8
    expect_out "$line"
    expect_out "Content-Type: application/vnd.kubernetes.protobuf"
    expect_out "Response Status: 201 Created"
}

# field OBJ... JSONPATH WANT: read back with -o json and compare one field.
field() {
    local want=${*: -1} path=${*: -2:1}
    local args=("${@:1:$#-2}")
    expect_exit 0 K get "${args[@]}" -o json
    local got
    got=$(printf '%s' "$OUT" | python3 -c "import json,sys; o=json.load(sys.stdin)
for k in '$path'.split('.'):
    o = o[int(k)] if isinstance(o, list) else o[k]
print(json.dumps(o, separators=(',', ':'), sort_keys=True) if not isinstance(o, str) else o)") ||
        fail "no $path in: $OUT"
    [ "$got" = "$want" ] || fail "${args[*]} $path: got $got, want $want"
}

created "namespace/team-a created" create namespace team-a
field namespace team-a status.phase Active

created "configmap/settings created" create configmap settings -n team-a \
    --from-literal=mode=fast --from-literal=empty= --from-literal=url=http://x:80/y
field configmap settings -n team-a data '{"empty":"","mode":"fast","url":"http://x:80/y"}'
field configmap settings -n team-a metadata.namespace team-a

created "secret/creds created" create secret generic creds -n team-a \
    --from-literal=user=admin --from-literal=pass='p@ss w0rd' --type=Opaque
field secret creds -n team-a data.user "$(printf admin | base64)"
field secret creds -n team-a data.pass "$(printf 'p@ss w0rd' | base64)"
field secret creds -n team-a type Opaque

printf 'bin\000\377\001ary' >"$TMP/blob"
created "secret/tls created" create secret generic tls -n team-a --from-file=blob="$TMP/blob"
field secret tls -n team-a data.blob "$(base64 -w0 "$TMP/blob")"

created "priorityclass.scheduling.k8s.io/urgent created" create priorityclass urgent \
    --value=100000 --description="for urgent work" --preemption-policy=Never
field priorityclass urgent value 100000
field priorityclass urgent description "for urgent work"
field priorityclass urgent preemptionPolicy Never

created "role.rbac.authorization.k8s.io/reader created" create role reader -n team-a \
    --verb=get,list,watch --resource=pods,configmaps
field role reader -n team-a rules.0.verbs '["get","list","watch"]'
field role reader -n team-a rules.0.resources '["pods","configmaps"]'

created "clusterrole.rbac.authorization.k8s.io/node-viewer created" create clusterrole node-viewer \
    --verb=get,list --resource=nodes
field clusterrole node-viewer rules.0.resources '["nodes"]'

created "rolebinding.rbac.authorization.k8s.io/alice-reader created" create rolebinding \
    alice-reader -n team-a --role=reader --user=alice
field rolebinding alice-reader -n team-a roleRef \
    '{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"}'
field rolebinding alice-reader -n team-a subjects.0.name alice

created "clusterrolebinding.rbac.authorization.k8s.io/ml-nodes created" create \
    clusterrolebinding ml-nodes --clusterrole=node-viewer --group=ml
field clusterrolebinding ml-nodes subjects.0 '{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"ml"}'

created "serviceaccount/builder created" create serviceaccount builder -n team-a
field serviceaccount builder -n team-a metadata.name builder

created "resourcequota/small created" create quota small -n team-a --hard=pods=3
field resourcequota small -n team-a spec.hard.pods 3

created "service/web created" create service clusterip web -n team-a --tcp=80:8080
field service web -n team-a spec.ports.0.targetPort 8080

# auth can-i: a SelfSubjectAccessReview in protobuf, answered in JSON.
expect_exit 0 K auth can-i create pods -n team-a -v=8
expect_out "Content-Type: application/vnd.kubernetes.protobuf"
printf '%s' "$OUT" | tail -1 | grep -qx yes || fail "admin can-i: $OUT"
expect_exit 0 A auth can-i list pods -n team-a
[ "$OUT" = yes ] || fail "alice list pods in team-a: $OUT"
expect_exit 1 A auth can-i delete pods -n team-a
[ "$OUT" = no ] || fail "alice delete pods: $OUT"
expect_exit 0 A auth can-i get nodes
printf '%s' "$OUT" | tail -1 | grep -qx yes || fail "alice (group ml) get nodes: $OUT"
expect_exit 1 A auth can-i list secrets -n team-a
expect_exit 1 A create configmap nope -n team-a --from-literal=a=b
expect_out 'configmaps is forbidden: User "alice" cannot create resource "configmaps"'

# delete (kubectl sends its DeleteOptions as JSON) and the objects are gone.
expect_exit 0 K delete configmap settings -n team-a
expect_out 'configmap "settings" deleted'
expect_exit 1 K get configmap settings -n team-a
expect_out "NotFound"
expect_exit 0 K delete clusterrolebinding ml-nodes
expect_exit 0 K delete priorityclass urgent
expect_exit 0 K delete namespace team-a
expect_out 'namespace "team-a" deleted'

# A dry run through the generator sends nothing; the server stays healthy.
expect_exit 0 K get --raw /healthz
expect_out "ok"
finish
