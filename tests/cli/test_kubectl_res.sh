# Today's kubectl (the system's 1.32) against `corral apiserver` over HTTPS
# with a token file: ServiceAccounts and their tokens, SelfSubjectReview
# and SelfSubjectRulesReview, impersonation (--as, --as-group), the scale
# subresource of InferenceServices and Volcano Jobs, Services, Endpoints,
# ResourceQuotas and LimitRanges created from files, and cluster-info.
#
# kubectl 1.32 sends protobuf bodies for `create token`, `auth whoami`,
# `auth can-i` and its `create` generators; the same requests are also made
# with JSON bodies through `kubectl create --raw`.
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
write_kubeconfig "$TMP/alice.kubeconfig" "https://127.0.0.1:$PORT" alice-token-0123456789 "$TMP/cert.pem"
K() { "$KUBECTL" --kubeconfig "$TMP/admin.kubeconfig" --request-timeout=20s "$@"; }
A() { "$KUBECTL" --kubeconfig "$TMP/alice.kubeconfig" --request-timeout=20s "$@"; }

expect_exit 0 K auth whoami
expect_out "admin"

# --- discovery --------------------------------------------------------------------------------
expect_exit 0 K api-resources
expect_out "ServiceAccount"
expect_out "ResourceQuota"
expect_out "LimitRange"
expect_out "Endpoints"
expect_out "selfsubjectreviews"
expect_out "selfsubjectrulesreviews"

# --- ServiceAccounts and tokens ---------------------------------------------------------------
cat >"$TMP/sa.yaml" <<'EOF'
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot}
EOF
expect_exit 0 K create -f "$TMP/sa.yaml"
expect_out "serviceaccount/robot created"
expect_exit 0 K get sa
expect_out "NAME      SECRETS   AGE"
expect_out "robot"
expect_exit 0 K get sa default -n kube-system -o name
expect_out "serviceaccount/default"

echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":1200}}' >"$TMP/tr.json"
expect_exit 0 K create --raw /api/v1/namespaces/default/serviceaccounts/robot/token -f "$TMP/tr.json"
TOKEN=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["token"])')
[ -n "$TOKEN" ] || fail "no token in $OUT"
echo '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' >"$TMP/ssr.json"
expect_exit 0 K --token="$TOKEN" create --raw /apis/authentication.k8s.io/v1/selfsubjectreviews -f "$TMP/ssr.json"
expect_out '"username":"system:serviceaccount:default:robot"'
expect_out '"system:serviceaccounts:default"'
expect_exit 1 K --token="$TOKEN" get pods
expect_out 'User "system:serviceaccount:default:robot" cannot list resource "pods" in API group "" in the namespace "default"'
expect_exit 1 K --token="${TOKEN}x" get pods
expect_out "Unauthorized"
expect_exit 1 K create --raw /api/v1/namespaces/default/serviceaccounts/nobody/token -f "$TMP/tr.json"
expect_out 'serviceaccounts "nobody" not found'

# --- reviews and impersonation ----------------------------------------------------------------
expect_exit 0 A create --raw /apis/authentication.k8s.io/v1/selfsubjectreviews -f "$TMP/ssr.json"
expect_out '"username":"alice"'
echo '{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}' >"$TMP/ssrr.json"
expect_exit 0 A create --raw /apis/authorization.k8s.io/v1/selfsubjectrulesreviews -f "$TMP/ssrr.json"
expect_out '"resources":["selfsubjectaccessreviews","selfsubjectrulesreviews"]'
expect_out '"incomplete":false'
expect_exit 0 K --as=bob --as-group=dev create --raw /apis/authentication.k8s.io/v1/selfsubjectreviews -f "$TMP/ssr.json"
expect_out '"username":"bob","groups":["dev","system:authenticated"]'
expect_exit 1 K --as=alice --as-group=dev get pods
expect_out 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"'
expect_exit 1 A --as=bob get pods
expect_out 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope'
expect_exit 1 K --as-group=dev get pods
expect_out "without impersonating a user"

# --- Services, Endpoints, quotas, limit ranges, cluster-info -------------------------------------
cat >"$TMP/objs.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web}
subsets:
- addresses: [{ip: 10.1.0.5}]
  ports: [{name: http, port: 8080}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus}
spec:
  hard: {requests.nvidia.com/gpu: "8", limits.cpu: "64"}
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - {type: Container, max: {cpu: "8"}}
EOF
expect_exit 0 K create -f "$TMP/objs.yaml"
expect_out "service/web created"
expect_out "endpoints/web created"
expect_out "resourcequota/gpus created"
expect_out "limitrange/defaults created"
expect_exit 0 K get svc
expect_out "NAME         TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE"
expect_out "kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP"
expect_out "web          ClusterIP   <none>       <none>        80/TCP"
expect_exit 0 K get ep
expect_out "10.1.0.5:8080"
expect_out "127.0.0.1:$PORT"
expect_exit 0 K get quota
expect_out "requests.nvidia.com/gpu: 0/8"
expect_out "limits.cpu: 0/64"
expect_exit 0 K get limits defaults -o jsonpath='{.spec.limits[0].default.cpu}'
[ "$OUT" = 8 ] || fail "LimitRange default: $OUT"
cat >"$TMP/bad.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: bad}
spec:
  ports: [{port: 70000}]
EOF
expect_exit 1 K create -f "$TMP/bad.yaml"
expect_out 'spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive'
expect_exit 0 K cluster-info
expect_out "Kubernetes control plane is running at https://127.0.0.1:$PORT"

# --- scale ------------------------------------------------------------------------------------
expect_exit 0 K create -f examples/llama3-service.yaml -f examples/single-node-8gpu.yaml -f examples/distributed-training.yaml
expect_exit 0 K scale --replicas=3 isvc/llama3-service
expect_out "inferenceservice.serving.kserve.io/llama3-service scaled"
expect_exit 0 K get isvc llama3-service -o jsonpath='{.spec.predictor.minReplicas}'
[ "$OUT" = 3 ] || fail "isvc minReplicas after scale: $OUT"
expect_exit 0 K scale --replicas=2 vcjob/pretrain-8gpu
expect_out "job.batch.volcano.sh/pretrain-8gpu scaled"
expect_exit 0 K get vcjob pretrain-8gpu -o jsonpath='{.spec.tasks[0].replicas}'
[ "$OUT" = 2 ] || fail "vcjob replicas after scale: $OUT"
expect_exit 0 K get --raw /apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/pretrain-8gpu/scale
expect_out '"status":{"replicas":0,"selector":"volcano.sh/job-name=pretrain-8gpu"}'

# --- the commands kubectl sends in protobuf ----------------------------------------------------
expect_exit 0 K create serviceaccount robot2
expect_exit 0 K create token robot --duration=20m
TOKEN2=$OUT
expect_exit 0 K --token="$TOKEN2" auth whoami
expect_out "system:serviceaccount:default:robot"
expect_exit 0 A auth can-i --list
expect_out "selfsubjectreviews.authentication.k8s.io"
expect_exit 1 K --as=alice --as-group=dev auth can-i list pods
expect_out "no"
expect_exit 0 K --as=bob auth whoami
expect_out "bob"
expect_exit 0 K create service clusterip web2 --tcp=80:8080
expect_exit 0 K create quota q2 --hard=pods=5

finish
